/**
 * Segments (#29 view 3): the active key's saved segments, paged on the server; `segments/new`
 * builds one and `segments/{id}` opens one to edit or delete (SegmentEditor.tsx: the rule builder
 * with its live count and sample).
 */
import { useState } from "preact/hooks"
import { type Segment, segmentsApi } from "../../../api/bulk-audience.ts"
import { ActionButton } from "../../../components/ActionButton.tsx"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { PAGE_SIZE, Pager } from "../../../components/Pager.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { When } from "../../../components/When.tsx"
import { hrefOf, navigate, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"
import type { ViewProps } from "../../index.ts"
import { FIELDS, OPS } from "./RuleRow.tsx"
import { SegmentEditor } from "./SegmentEditor.tsx"
import "../../sender/sender.css"
import "./audience.css"

/** The rules in a few words for the table: "all of: Tag has the tag, Status is". */
const summaryOf = (segment: Segment): string => {
  const { match, rules } = segment.rules
  if (rules.length === 0) return match === "all" ? "every contact" : "no contact"
  const words = rules.map((rule) => {
    const field = rule.field === "custom" ? rule.field_name : FIELDS.find(([f]) => f === rule.field)?.[1] ?? rule.field
    const op = OPS[rule.field].find(([o]) => o === rule.op)?.[1] ?? rule.op
    const value = rule.field === "engagement" ? `in ${rule.days} days` : rule.value ?? ""
    return `${field} ${op} ${value}`.trim()
  })
  return `${match === "all" ? "all" : "any"} of: ${words.join("; ")}`
}

const SegmentIndex = () => {
  const session = useSignedIn()
  const [offset, setOffset] = useState(0)
  const segments = useLoad(() => segmentsApi.page(PAGE_SIZE, offset), [offset, session.active_key_id])
  const page = segments.data
  return (
    <>
      <p><a class="button-link" href={hrefOf("segments/new")} onClick={onLinkClick("segments/new")}>New segment</a></p>
      <LoadStatus loaded={segments} what="segments" />
      {page === undefined ? null : page.total === 0 ? <p>This key has no saved segments yet.</p> : (
        <>
          <ScrollTable label="Segments">
            <table aria-busy={segments.loading}>
              <thead><tr><th scope="col">Name</th><th scope="col">Rules</th><th scope="col">Updated</th></tr></thead>
              <tbody>
                {page.items.map((segment) => (
                  <tr key={segment.id}>
                    <td class="wrap">
                      <a href={hrefOf(`segments/${encodeURIComponent(segment.id)}`)} onClick={onLinkClick(`segments/${encodeURIComponent(segment.id)}`)}>{segment.name}</a>
                    </td>
                    <td class="wrap">{summaryOf(segment)}</td>
                    <td><When iso={segment.updated_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollTable>
          <Pager label="Segments pages" total={page.total} offset={page.offset} limit={page.limit} onOffset={setOffset} busy={segments.loading} />
        </>
      )}
    </>
  )
}

const SegmentPage = ({ id }: { id: string }) => {
  const session = useSignedIn()
  const loaded = useLoad(() => segmentsApi.read(id), [id, session.active_key_id])
  const segment = loaded.data
  return (
    <>
      <a class="back" href={hrefOf("segments")} onClick={onLinkClick("segments")}>← All segments</a>
      <LoadStatus loaded={loaded} what="the segment" />
      {segment === undefined || segment.id !== id ? null : (
        <>
          <h2>{segment.name}</h2>
          {/* Keyed on the saved version: after a save the form starts again from what was saved. */}
          <SegmentEditor key={`${segment.id}:${segment.updated_at}`} segment={segment} onSaved={loaded.reload} />
          <section class="part" aria-labelledby="segment-delete">
            <h2 id="segment-delete">Delete</h2>
            <ActionButton danger confirm={`Delete the segment ${segment.name}?`} run={() => segmentsApi.remove(segment.id)} onDone={() => navigate("segments")}>
              Delete segment
            </ActionButton>
          </section>
        </>
      )}
    </>
  )
}

export const SegmentsView = ({ rest }: ViewProps) =>
  rest[0] === undefined
    ? <SegmentIndex />
    : rest[0] === "new"
      ? (
        <>
          <a class="back" href={hrefOf("segments")} onClick={onLinkClick("segments")}>← All segments</a>
          <h2>New segment</h2>
          <SegmentEditor key="new" segment={undefined} onSaved={() => undefined} />
        </>
      )
      : <SegmentPage key={rest[0]} id={decodeURIComponent(rest[0])} />
