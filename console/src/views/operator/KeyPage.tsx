/** One key: its label and webhook URL, the webhook's secret and test, and its deliveries. */
import { useState } from "preact/hooks"
import { type Key, keysApi } from "../../api/operator.ts"
import { ErrorMessage } from "../../components/ErrorMessage.tsx"
import { Field } from "../../components/Field.tsx"
import { hrefOf, onLinkClick } from "../../router.ts"
import { useSession } from "../../session.tsx"
import { DeliveryList } from "./DeliveryList.tsx"
import { ActionButton } from "../../components/ActionButton.tsx"
import { CopyButton } from "../../components/CopyButton.tsx"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { useLoad } from "../../components/use-load.ts"
import { useSubmit } from "../../components/use-submit.ts"

/** A webhook secret the API just made: shown once, like a token. */
const NewSecret = ({ id, secret }: { id: string; secret: string }) => (
  <div class="op-secret" role="status">
    <p>The new signing secret, shown only now: <code id={id}>{secret}</code></p>
    <CopyButton value={secret} what="secret" />
  </div>
)

const KeySettings = ({ item, onSaved }: { item: Key; onSaved: (secret: string | undefined) => void }) => {
  const [label, setLabel] = useState(item.label)
  const [url, setUrl] = useState(item.webhook_url ?? "")
  const { busy, error, onSubmit } = useSubmit(async () => {
    const saved = await keysApi.update(item.id, { label, webhook_url: url.trim() === "" ? null : url.trim() })
    onSaved(saved.webhook_secret)
  })
  return (
    <form onSubmit={onSubmit} aria-labelledby="key-settings-heading">
      <h2 id="key-settings-heading">Label and webhook</h2>
      <Field id="key-label" label="Label" value={label} onValue={setLabel} required maxLength={100} />
      <Field id="webhook-url" label="Webhook URL" type="url" value={url} onValue={setUrl} maxLength={2048} />
      <button type="submit" disabled={busy}>Save</button>
      <ErrorMessage error={error} id="key-settings-error" />
    </form>
  )
}

const Webhook = ({ keyId, refresh }: { keyId: string; refresh: number }) => {
  const config = useLoad(() => keysApi.webhook(keyId), [keyId, refresh])
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const [queued, setQueued] = useState<string | undefined>(undefined)
  const [round, setRound] = useState(0)
  return (
    <section aria-labelledby="webhook-heading">
      <h2 id="webhook-heading">Webhook</h2>
      <LoadStatus loaded={config} what="the webhook" />
      {config.data === undefined ? null : (
        <div>
          <p>
            {config.data.webhook_url === null ? "No webhook URL: events of this key are not sent anywhere." : <>Events go to <code class="op-wrap">{config.data.webhook_url}</code>, signed with <code id="secret-masked">{config.data.secret_masked ?? "no secret"}</code>.</>}
          </p>
          {secret === undefined ? null : <NewSecret id="rotated-secret" secret={secret} />}
          <div class="op-actions">
            <ActionButton run={() => keysApi.test(keyId)} onDone={(answer) => {
              setQueued(`A webhook.test event was queued as delivery ${answer.delivery_id}.`)
              setRound((n) => n + 1)
            }}>Send a test event</ActionButton>
            <ActionButton confirm="Rotate the secret? The old one stops signing at once." run={() => keysApi.rotateSecret(keyId)} onDone={(answer) => {
              setSecret(answer.webhook_secret)
              config.reload()
            }}>Rotate secret</ActionButton>
          </div>
          {queued === undefined ? null : <p role="status">{queued}</p>}
        </div>
      )}
      <DeliveryList keyId={keyId} refresh={round + refresh} />
    </section>
  )
}

export const KeyPage = ({ keyId }: { keyId: string }) => {
  const { reload: reloadSession } = useSession()
  const key = useLoad(() => keysApi.get(keyId), [keyId])
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const [saved, setSaved] = useState(0)
  return (
    <div>
      <p><a href={hrefOf("keys")} onClick={onLinkClick("keys")}>All keys</a></p>
      <LoadStatus loaded={key} what="the key" />
      {key.data === undefined ? null : (
        <div>
          <h2 class="op-key-name">Key “{key.data.label}”</h2>
          <KeySettings key={key.data.id} item={key.data} onSaved={(generated) => {
            setSecret(generated)
            setSaved((n) => n + 1)
            key.reload()
            void reloadSession().catch(() => undefined)
          }} />
          {secret === undefined ? null : <NewSecret id="generated-secret" secret={secret} />}
          <Webhook keyId={keyId} refresh={saved} />
        </div>
      )}
    </div>
  )
}
