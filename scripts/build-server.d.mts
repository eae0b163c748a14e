/** Types of scripts/build-server.mjs (plain JavaScript: it runs before anything compiles TypeScript). */
export declare const bundleFile: string
export declare const buildServer: () => Promise<void>
export declare const bundleIsStale: () => boolean
