/** The parts of the untyped rendering packages Herald uses (they ship no type declarations). */
declare module "mjml-core" {
  export interface MjmlError {
    readonly line: number
    readonly message: string
    readonly tagName: string
  }
  export interface MjmlOptions {
    readonly presets?: ReadonlyArray<unknown>
    readonly validationLevel?: "strict" | "soft" | "skip"
    readonly ignoreIncludes?: boolean
    readonly keepComments?: boolean
    readonly filePath?: string
    readonly actualPath?: string
  }
  const mjml2html: (mjml: string, options?: MjmlOptions) => Promise<{ readonly html: string; readonly errors: ReadonlyArray<MjmlError> }>
  export default mjml2html
}

declare module "mjml-preset-core" {
  const preset: unknown
  export default preset
}

declare module "html-to-text" {
  export interface HtmlToTextOptions {
    readonly wordwrap?: number | false
    readonly selectors?: ReadonlyArray<{ readonly selector: string; readonly format?: string; readonly options?: Record<string, unknown> }>
  }
  export const convert: (html: string, options?: HtmlToTextOptions) => string
}
