/**
 * One list (#29 view 2): its counts, its name, its double opt-in settings with a preview of the
 * confirmation mail (ConfirmationSettings.tsx), its members (ListMembers.tsx), and its delete —
 * refused by the API while a saved segment or a campaign uses it (409, the users named), which
 * the page explains beside the button.
 */
import { useState } from "preact/hooks"
import { ApiError } from "../../../api/client.ts"
import { listsApi, type MailingList } from "../../../api/bulk-audience.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { ErrorMessage } from "../../../components/ErrorMessage.tsx"
import { Field } from "../../../components/Field.tsx"
import { count } from "../../../components/format.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { useSubmit } from "../../../components/use-submit.ts"
import { When } from "../../../components/When.tsx"
import { hrefOf, navigate, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import { ConfirmationSettings } from "./ConfirmationSettings.tsx"
import { ListMembers } from "./ListMembers.tsx"

const Rename = ({ list, onSaved }: { list: MailingList; onSaved: () => void }) => {
  const [name, setName] = useState(list.name)
  const { busy, error, onSubmit } = useSubmit(async () => {
    await listsApi.rename(list.id, name)
    onSaved()
  })
  return (
    <form class="inline-form" aria-label="Rename the list" onSubmit={onSubmit}>
      <Field id="list-name" label="List name" value={name} onValue={setName} required maxLength={200} />
      <button type="submit" disabled={busy || name === list.name}>Rename</button>
      <ErrorMessage error={error} id="list-name-error" />
    </form>
  )
}

const Counts = ({ list }: { list: MailingList }) => (
  <dl class="list-counts">
    <div><dt>Members</dt><dd>{count(list.contact_count)}</dd></div>
    <div><dt>Sendable</dt><dd>{count(list.sendable_count)}</dd></div>
    <div><dt>Pending confirmation</dt><dd>{count(list.pending_count)}</dd></div>
    <div><dt>Created</dt><dd><When iso={list.created_at} /></dd></div>
  </dl>
)

/** A 409 from the delete: the API names the users; the page says what to do about them. */
const DeleteList = ({ list }: { list: MailingList }) => {
  const [refusal, setRefusal] = useState<unknown>(undefined)
  return (
    <section class="part" aria-labelledby="list-delete">
      <h3 id="list-delete">Delete</h3>
      <p>Deleting a list removes its memberships; the contacts stay. A list that a saved segment or a campaign uses cannot be deleted.</p>
      <ActionButton danger confirm={`Delete the list ${list.name}?`}
        run={() => listsApi.remove(list.id).catch((error: unknown) => {
          if (error instanceof ApiError && error.status === 409) setRefusal(error)
          throw error
        })}
        onDone={() => navigate("lists")}>
        Delete list
      </ActionButton>
      {refusal === undefined ? null : (
        <p class="notice">Remove the list from the segments' rules and the campaigns named above (or delete those) first; then delete it.</p>
      )}
    </section>
  )
}

export const ListPage = ({ id }: { id: string }) => {
  const session = useSignedIn()
  const loaded = useLoad(() => listsApi.read(id), [id, session.active_key_id])
  const list = loaded.data
  // After a save the list is read again (its counts may have moved too); the old one shows meanwhile.
  const update = () => loaded.reload()
  return (
    <div class="list-page">
      <a class="back" href={hrefOf("lists")} onClick={onLinkClick("lists")}>← All lists</a>
      <LoadStatus loaded={loaded} what="the list" />
      {list === undefined || list.id !== id ? null : (
        <>
          <h2>{list.name}</h2>
          <Counts list={list} />
          <Rename key={`${list.id}:${list.name}`} list={list} onSaved={update} />
          <ConfirmationSettings key={list.id} list={list} onSaved={update} />
          <ListMembers list={list} onChanged={loaded.reload} />
          <DeleteList list={list} />
        </>
      )}
    </div>
  )
}
