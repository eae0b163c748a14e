/**
 * The JSON contact import's body schema, apart from Api.ts so that the import worker
 * (import-worker.ts) can decode a body without loading the HTTP API and its middleware: only
 * effect's Schema and the shared bounds (http/bounds.ts). Api.ts serves the same schemas.
 */
import { Schema } from "effect"
import { boundedArray, boundedText, ContactMetadata, IdText, MAX_LINE_LENGTH, MAX_NAME_LENGTH } from "../../http/bounds.ts"

export const Name = boundedText(MAX_NAME_LENGTH, { trim: true })
export const MAX_TAG_LENGTH = 100
export const MAX_TAGS = 100
export const MAX_LIST_IDS = 100
/**
 * One JSON import (and one preview) may name this many contacts: more than a MAX_JSON_MB body can
 * hold at the default (15 MB of the shortest rows is about 790,000), so the body stays the bound.
 */
export const MAX_IMPORT_CONTACTS = 1_000_000
export const Tag = boundedText(MAX_TAG_LENGTH)
export const Tags = boundedArray(Tag, MAX_TAGS).annotations({ description: "Tags (strings); repeats and empty ones are dropped" })
export const Metadata = ContactMetadata

export const ImportContact = Schema.Struct({
  // Any text up to a line: a malformed address is an invalid row of the report, not a refused import.
  email: Schema.String.pipe(Schema.maxLength(MAX_LINE_LENGTH)),
  name: Schema.optional(Schema.NullOr(Name)),
  tags: Schema.optional(Tags),
  metadata: Schema.optional(Metadata)
})

const ListIds = boundedArray(IdText, MAX_LIST_IDS).annotations({
  description: "Lists of the key every imported contact joins (pending on a list requiring confirmation unless confirmed); another key's or an unknown list → 400"
})

export const ImportRequest = Schema.Struct({
  contacts: boundedArray(ImportContact, MAX_IMPORT_CONTACTS),
  list_ids: Schema.optional(ListIds),
  tags: Schema.optional(Tags.annotations({ description: "Added to every imported contact" })),
  update_existing: Schema.optional(Schema.Boolean),
  confirmed: Schema.optional(Schema.Boolean.annotations({ description: "The operator holds the contacts' consent: list memberships start confirmed" }))
})
