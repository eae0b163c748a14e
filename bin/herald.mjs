#!/usr/bin/env node
// @ts-check
/**
 * Herald's command under Node: runs the compiled appliance (dist/herald.js, built at `npm install`
 * by scripts/build-server.mjs), compiling it again first when a file in src/ is newer than it, so
 * an edited checkout never runs stale code. Deno runs src/main.ts itself (`npm run start:deno`).
 */
import { buildServer, bundleFile, bundleIsStale } from "../scripts/build-server.mjs"
import { pathToFileURL } from "node:url"

if (bundleIsStale()) await buildServer()
await import(pathToFileURL(bundleFile).href)
