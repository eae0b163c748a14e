/**
 * Keys and webhooks (#28 "Views" 5): the account's keys (create: the token shown once with a copy
 * button; rename; revoke), and per key its webhook (URL, test, rotate secret) and its deliveries
 * (status, code, payload and response body as text, retry).
 *
 *   /console/keys                       the keys
 *   /console/keys/{key}                 one key: label, webhook, deliveries
 *   /console/keys/{key}/deliveries/{d}  one delivery with its payload and every attempt's answer
 */
import { DeliveryView } from "./operator/DeliveryView.tsx"
import { KeyList } from "./operator/KeyList.tsx"
import { KeyPage } from "./operator/KeyPage.tsx"
import type { ViewProps } from "./index.ts"
import "./operator/operator.css"

export const KeysView = ({ rest }: ViewProps) => {
  const [keyId, section, deliveryId] = rest
  if (keyId === undefined) return <KeyList />
  if (section === "deliveries" && deliveryId !== undefined) return <DeliveryView keyId={keyId} deliveryId={deliveryId} />
  return <KeyPage keyId={keyId} />
}
