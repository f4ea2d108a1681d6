{{- define "askbridge.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "askbridge.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "askbridge.selectorLabels" -}}
app.kubernetes.io/name: {{ include "askbridge.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "askbridge.labels" -}}
{{ include "askbridge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* REDIS_URL built from the mode's addresses (passwordless Redis). */}}
{{- define "askbridge.redisURL" -}}
{{- $r := .Values.redis -}}
{{- if eq $r.mode "standalone" -}}
{{- printf "%s://%s/%d" (ternary "rediss" "redis" (default false $r.standalone.tls)) $r.standalone.address (int $r.standalone.db) -}}
{{- else if eq $r.mode "sentinel" -}}
{{- if not $r.sentinel.addresses }}{{ fail "redis.sentinel.addresses: list the Sentinels (host:port)" }}{{ end -}}
{{- $first := first $r.sentinel.addresses -}}
{{- $q := list (printf "master_name=%s" (required "redis.sentinel.masterName is required" $r.sentinel.masterName)) -}}
{{- range rest $r.sentinel.addresses }}{{ $q = append $q (printf "addr=%s" .) }}{{ end -}}
{{- printf "redis+sentinel://%s?%s" $first (join "&" $q) -}}
{{- else if eq $r.mode "cluster" -}}
{{- if not $r.cluster.addresses }}{{ fail "redis.cluster.addresses: list some Cluster nodes (host:port)" }}{{ end -}}
{{- $q := list -}}
{{- range rest $r.cluster.addresses }}{{ $q = append $q (printf "addr=%s" .) }}{{ end -}}
{{- printf "redis+cluster://%s" (first $r.cluster.addresses) -}}{{ if $q }}?{{ join "&" $q }}{{ end -}}
{{- else -}}
{{- fail (printf "redis.mode: must be standalone, sentinel or cluster, got %q" $r.mode) -}}
{{- end -}}
{{- end -}}
