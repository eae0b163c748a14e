/**
 * A form whose submit calls the API: `busy` while the call runs (its button disabled), and the
 * API's error kept to show beside the form (ErrorMessage), cleared at the next try. One place for
 * what every form of the console did by hand.
 */
import { useState } from "preact/hooks"

export const useSubmit = (action: () => Promise<void>) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      await action()
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, onSubmit: (event: Event) => void submit(event) }
}
