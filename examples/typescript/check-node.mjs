// The examples are .ts files that Node runs directly (type stripping, on by
// default from Node 22.18); older Node stops here with what to do.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(`The askbridge examples need Node 22.18 or later: they run .ts files directly. This is Node ${process.version}; install Node 22 (e.g. nvm install 22) and run the command again.`);
  process.exit(1);
}
