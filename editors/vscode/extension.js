// Starts `trainspec lsp` for TOML, YAML and JSON files, passes it the `trainspec.*` settings and tells
// it when a project configuration (pyproject.toml, .trainspec.toml) changes.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate() {
  const settings = vscode.workspace.getConfiguration("trainspec");
  const command = settings.get("path") || "trainspec";
  client = new LanguageClient(
    "trainspec",
    "trainspec",
    { command, args: ["lsp"] },
    {
      documentSelector: ["toml", "yaml", "json"].map((language) => ({ scheme: "file", language })),
      synchronize: {
        configurationSection: "trainspec",
        fileEvents: vscode.workspace.createFileSystemWatcher("**/{pyproject.toml,.trainspec.toml}"),
      },
      initializationOptions: { trainspec: JSON.parse(JSON.stringify(settings)) },
    },
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
