/**
 * The key the console acts as (#28: bulk resources, webhooks and rate windows belong to keys),
 * chosen by label. Switching asks the appliance (`PATCH /console/session`), then re-reads the
 * session, so every view shows data of the key the server acts as.
 */
import { useState } from "preact/hooks"
import { useSession, useSignedIn } from "../session.tsx"
import { ErrorMessage } from "./ErrorMessage.tsx"

export const KeySwitcher = () => {
  const session = useSignedIn()
  const { switchKey } = useSession()
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)

  const onChange = async (keyId: string) => {
    setError(undefined)
    setBusy(true)
    try {
      await switchKey(keyId)
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }

  return (
    <div class="key-switcher">
      <label for="active-key">Acting as key</label>
      <select
        id="active-key"
        value={session.active_key_id}
        disabled={busy}
        aria-describedby={error === undefined ? undefined : "active-key-error"}
        onChange={(event) => void onChange(event.currentTarget.value)}
      >
        {session.keys.map((key) => <option key={key.id} value={key.id}>{key.label}</option>)}
      </select>
      <ErrorMessage error={error} id="active-key-error" />
    </div>
  )
}

/** The active key's label, named on every view. */
export const activeKeyLabel = (keys: ReadonlyArray<{ id: string; label: string }>, activeKeyId: string): string =>
  keys.find((key) => key.id === activeKeyId)?.label ?? activeKeyId
