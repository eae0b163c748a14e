/**
 * The exports of a CommonJS package loaded with `import()`: under Node's ESM loader and in the
 * compiled bundle (esbuild's interop) they are the namespace's `default`, and only there in the
 * bundle (mailparser's `simpleParser` was undefined as a named export); under tsx they may be both.
 */
export const commonJsExports = <A>(module: A): A => (module as { readonly default?: A }).default ?? module
