package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// loadWithSecrets loads a configuration file whose token_file entries point
// under secretDir, with every such file created in a temporary directory.
func loadWithSecrets(t *testing.T, cfg []byte, secretDir string) *settings {
	t.Helper()
	dir := t.TempDir()
	for _, m := range regexp.MustCompile(regexp.QuoteMeta(secretDir)+`/([\w.-]+)`).FindAllStringSubmatch(string(cfg), -1) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, m[1]), []byte("token-"+m[1]+"\n"), 0o600))
	}
	path := filepath.Join(dir, "bridge.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(cfg), secretDir+"/", dir+"/")), 0o600))
	s, err := loadConfig(path, func(string) string { return "" })
	require.NoError(t, err)
	return s
}

func serveEnvByName() map[string]serveEnvVar {
	m := map[string]serveEnvVar{}
	for _, v := range serveEnv {
		m[v.name] = v
	}
	return m
}

// assertServeEnv checks that name is a variable askbridge serve reads, or the
// _FILE form of one that has it.
func assertServeEnv(t *testing.T, where, name string) {
	t.Helper()
	known := serveEnvByName()
	if base, ok := strings.CutSuffix(name, "_FILE"); ok {
		assert.True(t, known[base].file, "%s sets %s, but askbridge serve has no such _FILE variable", where, name)
		return
	}
	_, ok := known[name]
	assert.True(t, ok, "%s sets %s, which askbridge serve does not read", where, name)
}

func TestComposeFileRunsTheBridgeItDescribes(t *testing.T) {
	b, err := os.ReadFile("../../deploy/compose/compose.yaml")
	require.NoError(t, err)
	var c struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
			Secrets     []string          `yaml:"secrets"`
			Volumes     []string          `yaml:"volumes"`
			Healthcheck struct {
				Test []string `yaml:"test"`
			} `yaml:"healthcheck"`
		} `yaml:"services"`
		Secrets map[string]struct {
			File string `yaml:"file"`
		} `yaml:"secrets"`
	}
	require.NoError(t, yaml.Unmarshal(b, &c))
	bridge, ok := c.Services["bridge"]
	require.True(t, ok, "a bridge service")
	redis, ok := c.Services["redis"]
	require.True(t, ok, "a redis service")
	assert.Contains(t, strings.Join(redis.Command, " "), "--appendonly yes", "Redis keeps an AOF")
	assert.NotEmpty(t, redis.Healthcheck.Test, "Redis has a health check")

	containerfile, err := os.ReadFile("../../deploy/Containerfile")
	require.NoError(t, err)
	require.NotEmpty(t, bridge.Healthcheck.Test)
	assert.Equal(t, []string{"CMD", "/usr/local/bin/askbridge", "health", "--ready"}, bridge.Healthcheck.Test)
	assert.Contains(t, string(containerfile), "COPY askbridge /usr/local/bin/askbridge", "the health check runs the image's binary")
	args := bridge.Command
	require.NotEmpty(t, args)
	assert.Equal(t, 0, runBridge(t, nil, append(append([]string{}, args...), "--help")...).code, "askbridge %v parses", args)

	for name, value := range bridge.Environment {
		assertServeEnv(t, "compose.yaml", name)
		if secret, ok := strings.CutPrefix(value, "/run/secrets/"); ok {
			assert.Contains(t, bridge.Secrets, secret, "%s=%s: the bridge service does not mount that secret", name, value)
		}
	}
	for _, s := range bridge.Secrets {
		assert.NotEmpty(t, c.Secrets[s].File, "secret %s is not defined", s)
	}
	cfg, err := os.ReadFile("../../deploy/compose/bridge.yaml")
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`/run/secrets/([\w.-]+)`).FindAllStringSubmatch(string(cfg), -1) {
		assert.Contains(t, bridge.Secrets, m[1], "bridge.yaml reads /run/secrets/%s, which compose does not mount", m[1])
	}
	s := loadWithSecrets(t, cfg, "/run/secrets")
	assert.NotEmpty(t, s.Agents, "the compose configuration has tokens, so the bridge may listen on 0.0.0.0")
	assert.NotEmpty(t, s.Operators)
}

func TestHelmValuesConfigLoadsAndNamesRealVariables(t *testing.T) {
	b, err := os.ReadFile("../../deploy/helm/askbridge/values.yaml")
	require.NoError(t, err)
	var v struct {
		Config map[string]any `yaml:"config"`
	}
	require.NoError(t, yaml.Unmarshal(b, &v))
	ci, err := filepath.Glob("../../deploy/helm/askbridge/ci/*-values.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, ci)
	for _, f := range append(ci, "../../deploy/helm/askbridge/values.yaml") {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var v struct {
			Secrets struct {
				Env map[string]string `yaml:"env"`
			} `yaml:"secrets"`
			Env map[string]string `yaml:"env"`
		}
		require.NoError(t, yaml.Unmarshal(b, &v), f)
		for name := range v.Secrets.Env {
			assertServeEnv(t, f+" secrets.env", name+"_FILE")
		}
		for name := range v.Env {
			assertServeEnv(t, f+" env", name)
		}
	}
	cfg, err := yaml.Marshal(v.Config)
	require.NoError(t, err)
	s := loadWithSecrets(t, cfg, "/run/secrets/askbridge")
	assert.NotEmpty(t, s.Operators, "the chart's default configuration has tokens, so the bridge may listen on the pod's address")
}
