// Builds the dashboard into the directory given as the first argument
// (scripts/build-ui.sh: internal/ui/assets). The output depends only on the
// sources and the lockfile's package versions: same input, same bytes, so a
// test can rebuild and compare (internal/ui TestAssetsAreFresh).
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] && resolve(process.argv[2]);
if (!out) {
  console.error("usage: node build.mjs OUTDIR");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: join(here, "src/main.ts") },
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  outdir: out,
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
  absWorkingDir: here,
});
copyFileSync(join(here, "src/index.html"), join(out, "index.html"));
