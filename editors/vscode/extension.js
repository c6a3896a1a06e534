// Starts `trainspec lsp` for TOML, YAML and JSON files, passes it the `trainspec.*` settings and tells
// it when a project configuration (pyproject.toml, .trainspec.toml) changes. trainspec is looked for
// where the Python and ruff extensions look: beside the selected interpreter, in the workspace's
// virtualenv, then on PATH; `trainspec.path` overrides all three. A changed `trainspec.path` or a
// newly selected interpreter restarts the server, with no window reload.
const fs = require("fs");
const path = require("path");
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

const WINDOWS = process.platform === "win32";
const EXECUTABLE = WINDOWS ? "trainspec.exe" : "trainspec";
const BIN = WINDOWS ? "Scripts" : "bin";

let client;
let starting = Promise.resolve();

function isFile(file) {
  try {
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

// The Python extension's selected interpreter, when that extension is installed.
async function selectedInterpreter(folder) {
  const python = vscode.extensions.getExtension("ms-python.python");
  if (!python) return undefined;
  try {
    const api = python.isActive ? python.exports : await python.activate();
    const environments = api && api.environments;
    if (!environments) return undefined;
    const active = environments.getActiveEnvironmentPath(folder && folder.uri);
    const resolved = await environments.resolveEnvironment(active);
    return resolved && resolved.executable && resolved.executable.uri && resolved.executable.uri.fsPath;
  } catch {
    return undefined;
  }
}

// Where trainspec is, and how it was found; undefined when it is nowhere.
async function findTrainspec(settings) {
  const configured = settings.get("path");
  if (configured) return { command: configured, from: "the trainspec.path setting" };
  const folders = vscode.workspace.workspaceFolders || [];
  const interpreter = await selectedInterpreter(folders[0]);
  if (interpreter) {
    const beside = path.join(path.dirname(interpreter), EXECUTABLE);
    if (isFile(beside)) return { command: beside, from: "the selected Python interpreter" };
  }
  for (const folder of folders) {
    for (const venv of [".venv", "venv"]) {
      const inside = path.join(folder.uri.fsPath, venv, BIN, EXECUTABLE);
      if (isFile(inside)) return { command: inside, from: `the workspace's ${venv}` };
    }
  }
  for (const dir of (process.env.PATH || "").split(path.delimiter)) {
    const onPath = dir && path.join(dir, EXECUTABLE);
    if (onPath && isFile(onPath)) return { command: onPath, from: "PATH" };
  }
  return undefined;
}

// The formats a schema server serves beside trainspec: VS Code's own JSON support, and the YAML and Even
// Better TOML extensions when installed. The server leaves to them what they report (syntax errors and
// duplicate keys in every such file, schema problems in a file tied to trainspec's schema), so nothing
// is shown twice; `trainspec.rulesOnly` set to true or false decides for every file instead.
const SCHEMA_EXTENSIONS = { yaml: "redhat.vscode-yaml", toml: "tamasfe.even-better-toml" };

function schemaServers() {
  const found = ["json"];
  for (const [format, id] of Object.entries(SCHEMA_EXTENSIONS)) {
    if (vscode.extensions.getExtension(id)) found.push(format);
  }
  return found;
}

// The settings that tie files to schemas, which the server reads to tell the files the schema servers check.
const SCHEMA_SETTINGS = ["yaml", "json", "evenBetterToml"];

function schemaSettings() {
  const out = {};
  const yaml = vscode.workspace.getConfiguration("yaml").get("schemas");
  const json = vscode.workspace.getConfiguration("json").get("schemas");
  const toml = vscode.workspace.getConfiguration("evenBetterToml").get("schema.associations");
  if (yaml) out.yaml = { schemas: yaml };
  if (json) out.json = { schemas: json };
  if (toml) out.evenBetterToml = { schema: { associations: toml } };
  return JSON.parse(JSON.stringify(out));
}

let servers = "";

async function start() {
  const settings = vscode.workspace.getConfiguration("trainspec");
  const found = await findTrainspec(settings);
  if (!found) {
    const open = "Open Settings";
    const choice = await vscode.window.showErrorMessage(
      "trainspec was not found beside the selected Python interpreter, in the workspace's .venv or on PATH. " +
        "Install it there (pip install 'trainspec[lsp]') or set `trainspec.path` to its executable.",
      open,
    );
    if (choice === open) vscode.commands.executeCommand("workbench.action.openSettings", "trainspec.path");
    return;
  }
  client = new LanguageClient(
    "trainspec",
    "trainspec",
    { command: found.command, args: ["lsp"] },
    {
      documentSelector: ["toml", "yaml", "json"].map((language) => ({ scheme: "file", language })),
      synchronize: {
        configurationSection: ["trainspec", ...SCHEMA_SETTINGS],
        fileEvents: vscode.workspace.createFileSystemWatcher("**/{pyproject.toml,.trainspec.toml}"),
      },
      initializationOptions: {
        trainspec: { ...JSON.parse(JSON.stringify(settings)), schemaServers: schemaServers() },
        ...schemaSettings(),
      },
    },
  );
  try {
    await client.start();
  } catch (error) {
    client = undefined;
    vscode.window.showErrorMessage(
      `trainspec could not start \`${found.command} lsp\` (found through ${found.from}): ${error.message}. ` +
        "Set `trainspec.path` to a trainspec installed with its `lsp` extra.",
    );
  }
}

async function stop() {
  const running = client;
  client = undefined;
  if (running) await running.stop();
}

// Restarts run one after another, so two quick setting changes never start two servers.
function restart() {
  starting = starting.then(stop).then(start);
  return starting;
}

async function activate(context) {
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) =>
      event.affectsConfiguration("trainspec.path") ? restart() : undefined,
    ),
  );
  // A YAML or TOML extension installed or removed: the server is told again which formats it shares.
  servers = schemaServers().join();
  if (vscode.extensions.onDidChange) {
    context.subscriptions.push(
      vscode.extensions.onDidChange(() => {
        const now = schemaServers().join();
        if (now !== servers) {
          servers = now;
          restart();
        }
      }),
    );
  }
  const python = vscode.extensions.getExtension("ms-python.python");
  if (python) {
    try {
      const api = python.isActive ? python.exports : await python.activate();
      if (api && api.environments && api.environments.onDidChangeActiveEnvironmentPath) {
        context.subscriptions.push(api.environments.onDidChangeActiveEnvironmentPath(() => restart()));
      }
    } catch {
      // no interpreter events: the setting and the workspace .venv still work
    }
  }
  starting = start();
  return starting;
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate, findTrainspec };
