/** The account's keys: create one (its token shown once), open one, revoke one. */
import { useState } from "preact/hooks"
import { type CreatedKey, keysApi } from "../../api/operator.ts"
import { ErrorMessage } from "../../components/ErrorMessage.tsx"
import { Field } from "../../components/Field.tsx"
import { hrefOf, onLinkClick } from "../../router.ts"
import { useSession, useSignedIn } from "../../session.tsx"
import { ActionButton } from "../../components/ActionButton.tsx"
import { CopyButton } from "../../components/CopyButton.tsx"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { ScrollTable } from "../../components/ScrollTable.tsx"
import { When } from "../../components/When.tsx"
import { useLoad } from "../../components/use-load.ts"
import { useSubmit } from "../../components/use-submit.ts"

/** The token of the key just created: this answer is the only place it is ever shown. */
const NewToken = ({ created, onDismiss }: { created: CreatedKey; onDismiss: () => void }) => (
  <section class="op-secret" aria-labelledby="new-token-heading">
    <h2 id="new-token-heading">Key “{created.label}” created</h2>
    <p>Copy its token now: Herald keeps only a hash and will never show it again.</p>
    <p><code id="new-token">{created.token}</code></p>
    <CopyButton value={created.token} what="token" />
    <button type="button" class="secondary" onClick={onDismiss}>I have copied it</button>
  </section>
)

const CreateKey = ({ onCreated }: { onCreated: (key: CreatedKey) => void }) => {
  const [label, setLabel] = useState("")
  const { busy, error, onSubmit } = useSubmit(async () => {
    onCreated(await keysApi.create(label))
    setLabel("")
  })
  return (
    <form class="op-inline-form" onSubmit={onSubmit} aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      <Field id="new-key-label" label="Label" value={label} onValue={setLabel} required maxLength={100} />
      <button type="submit" disabled={busy}>Create key</button>
      <ErrorMessage error={error} id="create-key-error" />
    </form>
  )
}

export const KeyList = () => {
  const { reload: reloadSession } = useSession()
  const session = useSignedIn()
  const keys = useLoad(() => keysApi.list(), [])
  const [created, setCreated] = useState<CreatedKey | undefined>(undefined)
  const changed = () => {
    keys.reload()
    // The key switcher lists the account's keys: it must see a new or revoked one.
    void reloadSession().catch(() => undefined)
  }
  return (
    <div>
      {created === undefined ? null : <NewToken created={created} onDismiss={() => setCreated(undefined)} />}
      <CreateKey onCreated={(key) => {
        setCreated(key)
        changed()
      }} />
      <h2>Keys</h2>
      <LoadStatus loaded={keys} what="the keys" />
      {keys.data === undefined ? null : (
        <ScrollTable label="Keys"><table>
          <thead>
            <tr><th scope="col">Label</th><th scope="col">Token ends</th><th scope="col">Webhook</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Actions</th></tr>
          </thead>
          <tbody>
            {keys.data.items.map((key) => (
              <tr key={key.id}>
                <td><a href={hrefOf(`keys/${key.id}`)} onClick={onLinkClick(`keys/${key.id}`)}>{key.label}</a></td>
                <td><code>…{key.token_hint}</code></td>
                <td class="op-wrap">{key.webhook_url ?? "none"}</td>
                <td><When iso={key.created_at} /></td>
                <td><When iso={key.last_used_at} /></td>
                <td>
                  {key.id === session.active_key_id
                    // Revoking the key the console acts as would leave this session refused (403) on every call.
                    ? <span>The console acts as this key: switch to another to revoke it.</span>
                    : <ActionButton danger confirm={`Revoke ${key.label}? Its token stops working at once.`} run={() => keysApi.revoke(key.id)} onDone={changed}>
                        Revoke {key.label}
                      </ActionButton>}
                </td>
              </tr>
            ))}
          </tbody>
        </table></ScrollTable>
      )}
    </div>
  )
}
