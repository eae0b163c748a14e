// The part of mailauth 4's DKIM verifier the tests use (the package ships no types for it).
declare module "mailauth/lib/dkim/verify.js" {
  export function dkimVerify(
    input: Buffer,
    options: { readonly resolver: (name: string, type: string) => Promise<unknown> }
  ): Promise<{ readonly results: ReadonlyArray<{ readonly signingDomain: string; readonly status: { readonly result: string } }> }>
}
