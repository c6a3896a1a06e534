#!/usr/bin/env node
// Taplo's TOML language server (the @taplo/lsp WebAssembly build that the VS Code
// extension Even Better TOML runs) served over stdio with LSP framing, for
// editors and tests that start a server as a command: the npm `@taplo/cli` build
// has no language server in it.
//
//   node editors/taplo-lsp-stdio.mjs [--offline]
//
// --offline: no HTTP at all. Taplo always fetches the SchemaStore catalog when a
// workspace starts (taplo issue #475, the `catalogs` setting cannot turn it off);
// offline, that fetch fails at once and schemas come from files only.
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

const { TaploLsp } = createRequire(import.meta.url)("@taplo/lsp");

function send(message) {
  const body = Buffer.from(JSON.stringify(message), "utf8");
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

if (process.argv.includes("--offline")) {
  globalThis.fetch = async (url) => {
    throw new Error(`offline: not fetching ${url.url ?? url}`);
  };
}

const lsp = await TaploLsp.initialize(
  {
    cwd: () => process.cwd(),
    envVar: (name) => process.env[name],
    envVars: () => Object.entries(process.env),
    now: () => new Date(),
    isAbsolute: (path) => isAbsolute(path),
    readFile: (path) => readFile(path),
    writeFile: (path, bytes) => writeFile(path, bytes),
    // Taplo also hands over URLs of other schemes (its detached workspace is root:///).
    urlToFilePath: (url) => (url.startsWith("file:") ? fileURLToPath(url) : decodeURI(new URL(url).pathname)),
    findConfigFile: (from) =>
      [".taplo.toml", "taplo.toml"].map((name) => join(from, name)).find((path) => existsSync(path)),
    // Searching the disk for files is a CLI feature; the server matches globs itself.
    glob: () => [],
    // stdout carries the protocol, so whatever Taplo prints goes to stderr.
    stdin: process.stdin,
    stdout: process.stderr,
    stderr: process.stderr,
    stdErrAtty: () => false,
  },
  { onMessage: send },
);

let buffer = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const headerEnd = buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0) return;
    const match = /content-length:\s*(\d+)/i.exec(buffer.subarray(0, headerEnd).toString("ascii"));
    if (!match) throw new Error("LSP message without Content-Length");
    const start = headerEnd + 4;
    const end = start + Number(match[1]);
    if (buffer.length < end) return;
    const message = JSON.parse(buffer.subarray(start, end).toString("utf8"));
    buffer = buffer.subarray(end);
    if (message.method === "exit") process.exit(0);
    lsp.send(message);
  }
});
process.stdin.on("end", () => process.exit(0));
