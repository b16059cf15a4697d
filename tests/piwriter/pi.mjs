// Which Pi the writer scripts use: $PIWRITER_PI is "1.6" (default: @earendil-works/pi-coding-agent,
// the Pi people run, on Node >= 22.19) or "0.73" (@mariozechner/pi-coding-agent 0.73.1, the
// oldest supported). Both are pinned in package-lock.json.

import { readFileSync } from "node:fs";

export const PI = process.env.PIWRITER_PI || "1.6";
const PACKAGES = { "1.6": "@earendil-works/pi-coding-agent", "0.73": "@mariozechner/pi-coding-agent" };
export const PI_PACKAGE = PACKAGES[PI];
if (!PI_PACKAGE) throw new Error(`PIWRITER_PI must be one of ${Object.keys(PACKAGES).join(", ")}`);
export const PI_VERSION = JSON.parse(
  readFileSync(new URL(`./node_modules/${PI_PACKAGE}/package.json`, import.meta.url), "utf8"),
).version;
export const pi = await import(PI_PACKAGE);
export const { SessionManager } = pi;
