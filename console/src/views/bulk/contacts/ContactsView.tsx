/**
 * Contacts (#29 view 1), as the active key: `contacts` the list, `contacts/new` the add form,
 * `contacts/import` the import, `contacts/<id or percent-encoded email>` one contact (an address
 * always holds "@", so it never collides with "new" or "import").
 */
import type { ViewProps } from "../../index.ts"
import { ContactNew } from "./ContactEdit.tsx"
import { ContactList } from "./ContactList.tsx"
import { ContactPage } from "./ContactPage.tsx"
import { ImportView } from "./ImportView.tsx"
import "../../sender/sender.css"
import "./contacts.css"

export const ContactsView = ({ rest }: ViewProps) => {
  const [first] = rest
  if (first === undefined) return <ContactList />
  if (first === "new") return <ContactNew />
  if (first === "import") return <ImportView />
  return <ContactPage id={decodeURIComponent(first)} />
}
