// Preloaded by bunfig.toml: tests see none of the developer's SVC_* settings; each builds its own config.
for (const name of Object.keys(process.env)) {
  if (name.startsWith("SVC_")) delete process.env[name];
}
