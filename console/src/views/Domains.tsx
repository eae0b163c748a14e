/**
 * Domains (#28 view 3): the account's sending domains, adding one, and a domain's DNS records with
 * each record's status (from the last check: "Verify now" looks them all up) and a copy button for
 * each name and value. The API has no paging here: an account has a handful of domains.
 */
import { useState } from "preact/hooks"
import { type CheckedDnsRecord, type DnsRecord, type Domain, domainsApi, type DomainVerification } from "../api/sender.ts"
import { ErrorMessage, messageOf } from "../components/ErrorMessage.tsx"
import { Field } from "../components/Field.tsx"
import { hrefOf, navigate, onLinkClick } from "../router.ts"
import { useSignedIn } from "../session.tsx"
import type { ViewProps } from "./index.ts"
import { CopyButton } from "../components/CopyButton.tsx"
import { when } from "../components/format.ts"
import { useLoad } from "../components/use-load.ts"
import { ScrollTable } from "../components/ScrollTable.tsx"
import "./sender/sender.css"
import { useSubmit } from "../components/use-submit.ts"

const PURPOSE: Record<DnsRecord["purpose"], string> = {
  verification: "Ownership",
  dkim: "DKIM signing key",
  return_path: "Return path",
  spf: "SPF of the return path",
  dmarc: "DMARC (suggested)"
}

/**
 * A domain's route ends with a slash: the appliance answers a path whose last segment has a dot
 * (`acme.example`) as a missing asset, a 404, so `domains/acme.example/` is the link that also
 * works when reloaded or opened in a new tab.
 */
const domainRoute = (domain: string) => `domains/${encodeURIComponent(domain)}/`

const AddDomain = ({ onAdded }: { onAdded: (domain: Domain) => void }) => {
  const [name, setName] = useState("")
  const { busy, error, onSubmit } = useSubmit(async () => {
    onAdded(await domainsApi.add(name))
    setName("")
  })
  return (
    <form class="inline-form" aria-label="Add a domain" onSubmit={onSubmit}>
      <Field id="new-domain" label="Domain to add" required maxLength={300} value={name} onValue={setName} error={error === undefined ? undefined : messageOf(error)} />
      <button type="submit" disabled={busy}>Add domain</button>
    </form>
  )
}

const statusOf = (domain: Domain, record: DnsRecord, checked: DomainVerification | undefined): CheckedDnsRecord["status"] | "unchecked" => {
  const found = checked?.records.find((r) => r.purpose === record.purpose && r.name === record.name)
  if (found !== undefined) return found.status
  if (record.purpose === "verification" && domain.verified_by === "dns") return "verified"
  if (record.purpose === "return_path" && domain.return_path_verified) return "verified"
  return "unchecked"
}

const STATUS_TEXT = { verified: ["good", "Verified"], missing: ["bad", "Missing"], mismatch: ["bad", "Different value published"], unchecked: ["", "Not checked yet"] } as const

/**
 * One card per record rather than a table: a DKIM value is a few hundred characters, which a
 * table column at 390 px turns into a ribbon one letter wide.
 */
const Records = ({ checked, domain }: { domain: Domain; checked: DomainVerification | undefined }) => (
  <ul class="records" aria-label={`DNS records of ${domain.domain}`}>
    {domain.records.map((record) => {
      const status = statusOf(domain, record, checked)
      const [tone, text] = STATUS_TEXT[status]
      const found = checked?.records.find((r) => r.purpose === record.purpose && r.name === record.name)?.found ?? []
      const title = PURPOSE[record.purpose]
      return (
        <li key={`${record.purpose}-${record.name}`} class="card record" data-purpose={record.purpose}>
          <h3>{title} <span class="record-type">{record.type}{record.optional ? ", optional" : ""}</span></h3>
          <p><span class={`status-badge ${tone}`}>{text}</span></p>
          <dl>
            <dt>Name</dt>
            <dd><span class="record-value">{record.name}</span> <CopyButton value={record.name} what={`${title} name`} /></dd>
            <dt>Value</dt>
            <dd><span class="record-value">{record.value}</span> <CopyButton value={record.value} what={`${title} value`} /></dd>
            {status === "mismatch" && found.length > 0
              ? (<><dt>Published instead</dt><dd class="record-value">{found.join(", ")}</dd></>)
              : null}
          </dl>
        </li>
      )
    })}
  </ul>
)

const DomainDetail = ({ name }: { name: string }) => {
  const domains = useLoad(() => domainsApi.get(name), [name])
  const [checked, setChecked] = useState<DomainVerification | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [busy, setBusy] = useState(false)
  const verify = async () => {
    setBusy(true)
    setError(undefined)
    try {
      setChecked(await domainsApi.verify(name))
      domains.reload()
    } catch (failure) {
      setError(failure)
    } finally {
      setBusy(false)
    }
  }
  const domain = domains.state.kind === "ready" ? domains.state.value : undefined
  return (
    <div>
      <a class="back" href={hrefOf("domains")} onClick={onLinkClick("domains")}>← All domains</a>
      <h2>{name}</h2>
      {domains.state.kind === "failed" ? <ErrorMessage error={domains.state.error} /> : null}
      {domain === undefined ? null : (
        <>
          <p>
            {domain.verified
              ? `Verified ${domain.verified_by === "operator" ? "by an operator" : "through DNS"}${domain.verified_at === null ? "" : ` on ${when(domain.verified_at)}`}: it may send to anyone.`
              : "Not verified yet: publish the records below, then verify. Until then it may send to the simulator only."}
          </p>
          <p>
            <button type="button" onClick={() => void verify()} disabled={busy} aria-describedby={error === undefined ? undefined : "verify-error"}>
              {busy ? "Checking…" : "Verify now"}
            </button>{" "}
            {checked === undefined ? null : <span role="status">{checked.ready ? "Every required record is published." : "Some required records are missing."}</span>}
          </p>
          <ErrorMessage error={error} id="verify-error" />
          <Records domain={domain} checked={checked} />
        </>
      )}
    </div>
  )
}

const DomainList = () => {
  const session = useSignedIn()
  const domains = useLoad(() => domainsApi.list(), [session.active_key_id])
  return (
    <>
      <AddDomain onAdded={(domain) => navigate(domainRoute(domain.domain))} />
      {domains.state.kind === "failed" ? <ErrorMessage error={domains.state.error} /> : null}
      {domains.state.kind === "loading" ? <p role="status">Loading domains…</p> : null}
      {domains.state.kind !== "ready" ? null : domains.state.value.items.length === 0
        ? <p>No domain yet. Add the domain you send from; until it is verified it may send to the simulator.</p>
        : (
          <ScrollTable label="Domains">
            <table>
              <thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Return path</th><th scope="col">Added</th></tr></thead>
              <tbody>
                {domains.state.value.items.map((d) => (
                  <tr key={d.domain}>
                    <td class="wrap"><a href={hrefOf(domainRoute(d.domain))} onClick={onLinkClick(domainRoute(d.domain))}>{d.domain}</a></td>
                    <td><span class={`status-badge ${d.verified ? "good" : "wait"}`}>{d.verified ? "Verified" : "Unverified"}</span></td>
                    <td>{d.return_path_verified ? "Published" : "Not yet"}</td>
                    <td>{when(d.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollTable>
        )}
    </>
  )
}

export const DomainsView = ({ rest }: ViewProps) => rest[0] === undefined ? <DomainList /> : <DomainDetail name={rest[0]} />
