// Builds the VS Code extension as one VSIX: `node editors/vscode/build.mjs [OUT.vsix]`
// (default: editors/vscode/dist/trainspec.vsix). The extension and its language client are
// bundled by esbuild into one file, so the package holds five files instead of a node_modules tree;
// `vscode` itself is provided by the editor.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const { build } = require("esbuild");
const { createVSIX } = require("@vscode/vsce");

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] || join(here, "dist", "trainspec.vsix"));
mkdirSync(dirname(out), { recursive: true });
const stage = mkdtempSync(join(tmpdir(), "trainspec-vsix-"));
try {
  await build({
    entryPoints: [join(here, "extension.js")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node18",
    external: ["vscode"],
    outfile: join(stage, "extension.js"),
    minify: true,
    logLevel: "warning",
  });
  const manifest = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));
  delete manifest.dependencies; // bundled into extension.js
  manifest.files = ["extension.js", "README.md", "LICENSE"];
  writeFileSync(join(stage, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  cpSync(join(here, "README.md"), join(stage, "README.md"));
  cpSync(join(here, "..", "..", "LICENSE"), join(stage, "LICENSE"));
  await createVSIX({ cwd: stage, packagePath: out, dependencies: false, allowMissingRepository: true });
  console.log(`wrote ${out}`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
