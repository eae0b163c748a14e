/**
 * Admin (#28 "Views" 7), for admin accounts: accounts (create, plan, limits, unpause, suspend),
 * the outbound queue by destination site, and refused inbound reports with the reason. The
 * navigation hides this view from other accounts, and the API refuses them (403): a non-admin who
 * opens the URL sees the API's refusal, never an empty page.
 *
 *   /console/admin                 accounts, queue, refused inbound reports
 *   /console/admin/accounts/{id}   one account: plan, limits, suspend, unpause
 */
import { AccountPage } from "./operator/AccountPage.tsx"
import { Accounts } from "./operator/Accounts.tsx"
import { Queue, RefusedInbound } from "./operator/AdminLists.tsx"
import type { ViewProps } from "./index.ts"
import "./operator/operator.css"

export const AdminView = ({ rest }: ViewProps) => {
  const [section, id] = rest
  if (section === "accounts" && id !== undefined) return <AccountPage id={id} />
  return (
    <div>
      <Accounts />
      <Queue />
      <RefusedInbound />
    </div>
  )
}
