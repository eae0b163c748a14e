/**
 * Free text that can be stored and sent as it was given. Two kinds of JavaScript string cannot:
 * - NUL (U+0000): PostgreSQL's text and jsonb refuse it (a 500 at insert, or at search time in a
 *   LIKE pattern), and in a message header it ends the line for many C-based MTAs;
 * - lone UTF-16 surrogates (U+D800–U+DFFF without their pair): they have no UTF-8 encoding, so
 *   jsonb refuses their `\uD800` escape and a text column would silently store U+FFFD instead.
 * Every free-text field that reaches the database or a message is declared through `storable`,
 * so such a string is a 400 naming the field, never a 500 or a changed value.
 */
import { Schema } from "effect"

export const UNSTORABLE_TEXT_MESSAGE = "must not contain NUL (U+0000) or unpaired surrogate characters"

// Without the u flag a regular expression sees UTF-16 code units, so a surrogate is matched on its
// own; a high one not followed by a low one, or a low one not preceded by a high one, is unpaired.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const SURROGATE = /[\uD800-\uDFFF]/

/**
 * True when the string has no NUL and every surrogate is paired. Every body string goes through
 * here (http/storable-input.ts): the look-arounds run only on a string that has a surrogate at
 * all, since scanning megabytes with them holds the event loop for tens of milliseconds.
 */
export const isStorableText = (s: string): boolean => !s.includes("\u0000") && (!SURROGATE.test(s) || !UNSTORABLE.test(s))

/**
 * The schema, refined to refuse NUL and lone surrogates. The empty jsonSchema annotation keeps
 * the field's OpenAPI description: a refinement without one is documented as its bare source.
 */
export const storable = <A extends string, I, R>(self: Schema.Schema<A, I, R>) =>
  self.pipe(Schema.filter((s: A) => isStorableText(s) || UNSTORABLE_TEXT_MESSAGE, { jsonSchema: {} }))

/** Any string that may be stored or sent: the common case of `storable`. */
export const StorableString = storable(Schema.String)
