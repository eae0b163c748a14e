/**
 * Editing a contact and adding one: name, tags (comma-separated), custom fields as a JSON object,
 * and (editing) the status a person may set — `unsubscribed` applies the whole unsubscribe,
 * `active` only when no suppression remains (the API's 409 says so beside the form). The API's
 * refusal shows under the field it names; unsaved edits warn before leaving.
 */
import { useState } from "preact/hooks"
import { ApiError } from "../../../api/client.ts"
import { type Contact, type ContactPatch, contactsApi } from "../../../api/bulk-contacts.ts"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { useSubmit } from "../../../components/use-submit.ts"
import { useLeaveGuard } from "../../../components/use-leave-guard.ts"
import { navigate } from "../../../router.ts"

interface Form {
  readonly email: string
  readonly name: string
  readonly tags: string
  readonly metadata: string
  readonly status: "" | "active" | "unsubscribed"
}

const formOf = (contact: Contact): Form => ({
  email: contact.email,
  name: contact.name ?? "",
  tags: contact.tags.join(", "),
  metadata: Object.keys(contact.metadata).length === 0 ? "" : JSON.stringify(contact.metadata, null, 2),
  status: ""
})

const EMPTY: Form = { email: "", name: "", tags: "", metadata: "", status: "" }

const tagsOf = (text: string): Array<string> => text.split(",").map((tag) => tag.trim()).filter((tag) => tag !== "")

class BadMetadata extends Error {}

/** The custom fields typed as JSON: an object, or nothing. */
const metadataOf = (text: string): Record<string, unknown> => {
  if (text.trim() === "") return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new BadMetadata(`Custom fields are not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new BadMetadata("Custom fields must be a JSON object, like {\"city\": \"Lyon\"}.")
  return parsed as Record<string, unknown>
}

/** The field an error belongs under: the API's `param` (tags[0] → tags), or the metadata's own check. */
const paramOf = (error: unknown): string | undefined =>
  error instanceof BadMetadata ? "metadata" : error instanceof ApiError ? error.param?.split(/[.[]/)[0] : undefined

/** Whether the form shows `error` under one of its fields (else it shows beside the form). */
const underAField = (error: unknown, adding: boolean): boolean => {
  const param = paramOf(error)
  return param === "name" || param === "tags" || param === "metadata" || (adding && param === "email")
}

const FormFields = ({ adding, error, form, set }: { adding: boolean; error: unknown; form: Form; set: (patch: Partial<Form>) => void }) => {
  const about = (param: string) => (paramOf(error) === param ? (error as Error).message : undefined)
  return (
    <>
      {adding ? <Field id="contact-email" label="Email" type="email" required maxLength={254} value={form.email} onValue={(email) => set({ email })} error={about("email")} /> : null}
      <Field id="contact-name" label="Name" maxLength={200} value={form.name} onValue={(name) => set({ name })} error={about("name")} />
      <Field id="contact-tags" label="Tags (comma-separated)" maxLength={10_000} value={form.tags} onValue={(tags) => set({ tags })} error={about("tags")} />
      <div class="field">
        <label for="contact-metadata">Custom fields (JSON object)</label>
        <textarea id="contact-metadata" value={form.metadata} spellcheck={false} aria-invalid={about("metadata") === undefined ? undefined : true}
          aria-describedby={about("metadata") === undefined ? undefined : "contact-metadata-error"} onInput={(e) => set({ metadata: e.currentTarget.value })} />
        {about("metadata") === undefined ? null : <p class="error" id="contact-metadata-error">{about("metadata")}</p>}
      </div>
    </>
  )
}

export const ContactEdit = ({ contact, onSaved }: { contact: Contact; onSaved: () => void }) => {
  const [form, setForm] = useState<Form>(() => formOf(contact))
  const [saved, setSaved] = useState("")
  const dirty = JSON.stringify(form) !== JSON.stringify(formOf(contact))
  useLeaveGuard(dirty)
  const { busy, error, onSubmit } = useSubmit(async () => {
    setSaved("")
    const patch: ContactPatch = {
      name: form.name.trim() === "" ? null : form.name.trim(),
      tags: tagsOf(form.tags),
      metadata: metadataOf(form.metadata),
      ...(form.status === "" ? {} : { status: form.status })
    }
    const updated = await contactsApi.update(contact.id, patch)
    setForm(formOf(updated))
    setSaved("Saved.")
    onSaved()
  })
  const set = (patch: Partial<Form>) => setForm({ ...form, ...patch })
  return (
    <section class="part" aria-labelledby="contact-edit">
      <h2 id="contact-edit">Edit</h2>
      <form class="contact-form" aria-label="Edit contact" onSubmit={onSubmit}>
        <FormFields adding={false} error={error} form={form} set={set} />
        <div class="field">
          <label for="contact-status">Change status</label>
          <select id="contact-status" value={form.status} onChange={(e) => set({ status: e.currentTarget.value as Form["status"] })}>
            <option value="">Keep {contact.status}</option>
            <option value="unsubscribed">Unsubscribe (suppresses the address)</option>
            <option value="active">Make active again</option>
          </select>
        </div>
        {underAField(error, false) ? null : <ErrorMessage error={error} />}
        <button type="submit" disabled={busy}>Save changes</button>
        <span role="status" class="done">{saved}</span>
      </form>
    </section>
  )
}

export const ContactNew = () => {
  const [form, setForm] = useState<Form>(EMPTY)
  useLeaveGuard(JSON.stringify(form) !== JSON.stringify(EMPTY))
  const { busy, error, onSubmit } = useSubmit(async () => {
    const tags = tagsOf(form.tags)
    const metadata = metadataOf(form.metadata)
    const created = await contactsApi.create({
      email: form.email.trim(),
      ...(form.name.trim() === "" ? {} : { name: form.name.trim() }),
      ...(tags.length === 0 ? {} : { tags }),
      ...(Object.keys(metadata).length === 0 ? {} : { metadata })
    })
    setForm(EMPTY)
    navigate(`contacts/${created.id}`)
  })
  return (
    <section class="part" aria-labelledby="contact-new">
      <h2 id="contact-new">Add a contact</h2>
      <form class="contact-form" aria-label="Add a contact" onSubmit={onSubmit}>
        <FormFields adding error={error} form={form} set={(patch) => setForm({ ...form, ...patch })} />
        {underAField(error, true) ? null : <ErrorMessage error={error} />}
        <button type="submit" disabled={busy}>Add contact</button>
      </form>
    </section>
  )
}
