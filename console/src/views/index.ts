/**
 * The console's views, in navigation order: one file per view. A view gets the rest of the path
 * after its own segment (`messages/msg_123` → `["msg_123"]`) to open one item.
 */
import type { FunctionComponent } from "preact"
import { AdminView } from "./Admin.tsx"
import { ContactsView } from "./bulk/contacts/ContactsView.tsx"
import { ListsView } from "./bulk/audience/Lists.tsx"
import { SegmentsView } from "./bulk/audience/Segments.tsx"
import { DomainsView } from "./Domains.tsx"
import { KeysView } from "./Keys.tsx"
import { MessagesView } from "./Messages.tsx"
import { OverviewView } from "./Overview.tsx"
import { SuppressionsView } from "./Suppressions.tsx"
import { TemplatesView } from "./bulk/templates/Templates.tsx"
import { UsageView } from "./Usage.tsx"
import { CampaignsView } from "./bulk/campaigns/Campaigns.tsx"
import { SequencesView } from "./bulk/campaigns/Sequences.tsx"

export interface ViewProps {
  /** The path segments after the view's own. */
  readonly rest: ReadonlyArray<string>
}

export interface ViewEntry {
  /** The first path segment below /console/ ("" is the overview). */
  readonly segment: string
  readonly title: string
  /** Shown only to admin accounts (the API refuses the rest anyway). */
  readonly adminOnly: boolean
  readonly component: FunctionComponent<ViewProps>
}

export const VIEWS: ReadonlyArray<ViewEntry> = [
  { segment: "", title: "Overview", adminOnly: false, component: OverviewView },
  { segment: "messages", title: "Messages", adminOnly: false, component: MessagesView },
  { segment: "domains", title: "Domains", adminOnly: false, component: DomainsView },
  { segment: "suppressions", title: "Suppressions", adminOnly: false, component: SuppressionsView },
  { segment: "contacts", title: "Contacts", adminOnly: false, component: ContactsView },
  { segment: "lists", title: "Lists", adminOnly: false, component: ListsView },
  { segment: "segments", title: "Segments", adminOnly: false, component: SegmentsView },
  { segment: "templates", title: "Templates", adminOnly: false, component: TemplatesView },
  { segment: "campaigns", title: "Campaigns", adminOnly: false, component: CampaignsView },
  { segment: "sequences", title: "Sequences", adminOnly: false, component: SequencesView },
  { segment: "keys", title: "Keys and webhooks", adminOnly: false, component: KeysView },
  { segment: "usage", title: "Usage and plan", adminOnly: false, component: UsageView },
  { segment: "admin", title: "Admin", adminOnly: true, component: AdminView }
]

/** The view for a path, and the segments after its own; undefined: no such view. */
export const viewFor = (path: string): { view: ViewEntry; rest: ReadonlyArray<string> } | undefined => {
  const [first = "", ...rest] = path.split("/").filter((segment) => segment !== "")
  const view = VIEWS.find((entry) => entry.segment === first)
  return view === undefined ? undefined : { view, rest }
}
