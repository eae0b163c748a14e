/**
 * Admin (#28 "Views" 7), for admin accounts: accounts (create, plan, limits, unpause, suspend),
 * the outbound queue by destination site, and refused inbound reports with the reason. The
 * navigation hides this view from other accounts, and the API refuses them (403): a non-admin who
 * opens the URL sees the API's refusal, never an empty page.
 *
 *   /console/admin                 accounts, queue, refused inbound reports
 *   /console/admin/accounts/{id}   one account: plan, limits, suspend, unpause
 */
import { adminApi } from "../api/operator.ts"
import { useSignedIn } from "../session.tsx"
import { AccountPage } from "./operator/AccountPage.tsx"
import { Accounts } from "./operator/Accounts.tsx"
import { Queue, RefusedInbound } from "./operator/AdminLists.tsx"
import { LoadStatus } from "../components/LoadStatus.tsx"
import { useLoad } from "../components/use-load.ts"
import type { ViewProps } from "./index.ts"
import "./operator/operator.css"

/**
 * What a non-admin who opened /console/admin sees: the API is still asked (it decides, not the
 * console), and its refusal is shown once instead of once per section.
 */
const NotAdmin = ({ rest }: ViewProps) => {
  const asked = useLoad(() => adminApi.queue(1, 0), [])
  return asked.data === undefined ? <LoadStatus loaded={asked} what="the admin view" /> : <AdminSections rest={rest} />
}

export const AdminView = ({ rest }: ViewProps) => {
  const session = useSignedIn()
  return session.account.is_admin ? <AdminSections rest={rest} /> : <NotAdmin rest={rest} />
}

const AdminSections = ({ rest }: ViewProps) => {
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
