/** The admin's accounts: a form to create one, and the list, a page at a time from the API. */
import { useState } from "preact/hooks"
import { adminApi, usageApi } from "../../api/operator.ts"
import { ErrorMessage } from "../../components/ErrorMessage.tsx"
import { Field } from "../../components/Field.tsx"
import { hrefOf, navigate, onLinkClick } from "../../router.ts"
import { LoadStatus } from "../../components/LoadStatus.tsx"
import { Pager } from "../../components/Pager.tsx"
import { ScrollTable } from "../../components/ScrollTable.tsx"
import { useLoad } from "../../components/use-load.ts"
import { useSubmit } from "../../components/use-submit.ts"

const PAGE = 20

const CreateAccount = () => {
  const plans = useLoad(() => usageApi.plans(), [])
  const [name, setName] = useState("")
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [plan, setPlan] = useState("")
  const { busy, error, onSubmit: submit } = useSubmit(async () => {
    const account = await adminApi.createAccount({ name, email, password, ...(plan === "" ? {} : { package_id: plan }) })
    navigate(`admin/accounts/${account.id}`)
  })
  return (
    <details>
      <summary>Create an account</summary>
      <form class="op-inline-form" onSubmit={submit}>
        <Field id="account-name" label="Name" value={name} onValue={setName} required maxLength={200} />
        <Field id="account-email" label="Email" type="email" value={email} onValue={setEmail} required />
        <Field id="account-password" label="Password" type="password" autoComplete="new-password" value={password} onValue={setPassword} required />
        <div class="op-field">
          <label for="account-plan">Plan</label>
          <select id="account-plan" value={plan} onChange={(event) => setPlan(event.currentTarget.value)}>
            <option value="">No plan</option>
            {(plans.data?.items ?? []).map((item) => <option key={item.id} value={item.id}>{item.name}</option>)}
          </select>
        </div>
        <button type="submit" disabled={busy}>Create account</button>
        <ErrorMessage error={error} id="create-account-error" />
      </form>
    </details>
  )
}

export const Accounts = () => {
  const [offset, setOffset] = useState(0)
  const accounts = useLoad(() => adminApi.accounts(PAGE, offset), [offset])
  return (
    <section class="op-section" aria-labelledby="accounts-heading">
      <h2 id="accounts-heading">Accounts</h2>
      <CreateAccount />
      <LoadStatus loaded={accounts} what="the accounts" />
      {accounts.data === undefined ? null : (
        <div>
          <ScrollTable label="Accounts"><table>
            <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Status</th><th scope="col">Plan</th><th scope="col">Sending</th></tr></thead>
            <tbody>
              {accounts.data.items.map((account) => (
                <tr key={account.id}>
                  <td class="op-wrap"><a href={hrefOf(`admin/accounts/${account.id}`)} onClick={onLinkClick(`admin/accounts/${account.id}`)}>{account.name}</a></td>
                  <td class="op-wrap">{account.email}</td>
                  <td>{account.status}{account.is_admin ? " (admin)" : ""}</td>
                  <td>{account.package_id ?? "none"}</td>
                  <td class="op-wrap">{account.sending_paused_reason === null ? "sending" : `paused: ${account.sending_paused_reason}`}</td>
                </tr>
              ))}
            </tbody>
          </table></ScrollTable>
          <Pager label="Accounts pages" total={accounts.data.total} limit={PAGE} offset={offset} onOffset={setOffset} />
        </div>
      )}
    </section>
  )
}
