/**
 * Copies a value (a DNS record, a key's token, a webhook secret) to the clipboard and says so. Where
 * the clipboard API is refused (an insecure origin, a denied permission), it says that instead: the
 * value is still on screen to select by hand.
 */
import { useState } from "preact/hooks"

export const CopyButton = ({ value, what }: { value: string; what: string }) => {
  const [outcome, setOutcome] = useState<"" | "Copied" | "Copy refused: select the text instead">("")
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value)
      setOutcome("Copied")
    } catch {
      setOutcome("Copy refused: select the text instead")
    }
  }
  return (
    <span class="copy">
      <button type="button" class="secondary" aria-label={`Copy ${what}`} onClick={() => void copy()}>Copy</button>
      <span role="status" class="copy-outcome">{outcome}</span>
    </span>
  )
}
