// esbuild bundles CSS imports into the entry's stylesheet; the import itself has no value.
declare module "*.css" {}
