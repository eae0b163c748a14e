/**
 * Suppressions (#28 view 4): the account's suppression list — search, add, remove — and for admin
 * accounts also the platform list (suppressed for every account) and the blocked recipient
 * domains. Each list is paged on the server.
 */
import { accountSuppressions, type BlockedDomain, blockedDomains, platformSuppressions, type Suppression } from "../api/sender.ts"
import { useSignedIn } from "../session.tsx"
import type { ViewProps } from "./index.ts"
import { type Column, EntryList } from "./sender/EntryList.tsx"
import { when } from "../components/format.ts"
import "./sender/sender.css"

const SUPPRESSION_COLUMNS: ReadonlyArray<Column<Suppression>> = [
  { title: "Address", cell: (s) => s.email },
  { title: "Reason", cell: (s) => s.reason },
  { title: "Source", cell: (s) => s.source ?? "" },
  { title: "Since", cell: (s) => when(s.created_at) }
]

const BLOCKED_COLUMNS: ReadonlyArray<Column<BlockedDomain>> = [
  { title: "Domain", cell: (b) => b.domain },
  { title: "Reason", cell: (b) => b.reason },
  { title: "Since", cell: (b) => when(b.created_at) }
]

export const SuppressionsView = (_: ViewProps) => {
  const session = useSignedIn()
  return (
    <>
      <section class="part" aria-labelledby="account-suppressions">
        <h2 id="account-suppressions">This account's suppressions</h2>
        <EntryList id="suppressions" title="Suppressions" noun="address" api={accountSuppressions} keyOf={(s) => s.email} columns={SUPPRESSION_COLUMNS} />
      </section>
      {session.account.is_admin
        ? (
          <>
            <section class="part" aria-labelledby="platform-suppressions">
              <h2 id="platform-suppressions">Platform suppressions (every account)</h2>
              <EntryList id="platform" title="Platform suppressions" noun="address" api={platformSuppressions} keyOf={(s) => s.email} columns={SUPPRESSION_COLUMNS} />
            </section>
            <section class="part" aria-labelledby="blocked-domains">
              <h2 id="blocked-domains">Blocked recipient domains</h2>
              <EntryList id="blocked" title="Blocked domains" noun="domain" api={blockedDomains} keyOf={(b) => b.domain} columns={BLOCKED_COLUMNS} />
            </section>
          </>
        )
        : null}
    </>
  )
}
