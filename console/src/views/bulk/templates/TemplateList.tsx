/** The active key's templates, one page at a time (the API pages them; never the whole list). */
import { useState } from "preact/hooks"
import { templatesApi } from "../../../api/bulk-templates.ts"
import { LoadStatus } from "../../../components/LoadStatus.tsx"
import { PAGE_SIZE, Pager } from "../../../components/Pager.tsx"
import { ScrollTable } from "../../../components/ScrollTable.tsx"
import { When } from "../../../components/When.tsx"
import { useLoad } from "../../../components/use-load.ts"
import { hrefOf, onLinkClick } from "../../../router.ts"
import { useSignedIn } from "../../../session.tsx"

export const TemplateList = () => {
  const session = useSignedIn()
  const [offset, setOffset] = useState(0)
  const templates = useLoad(() => templatesApi.list(PAGE_SIZE, offset), [offset, session.active_key_id])
  const page = templates.data
  return (
    <section class="templates" aria-labelledby="templates-heading">
      <div class="templates-head">
        <h2 id="templates-heading">Templates of this key</h2>
        <a class="button-link" href={hrefOf("templates/new")} onClick={onLinkClick("templates/new")}>New template</a>
      </div>
      <LoadStatus loaded={templates} what="the templates" />
      {page === undefined ? null : page.total === 0
        ? <p>This key has no templates yet.</p>
        : (
          <>
            <ScrollTable label="Templates">
              <table aria-busy={templates.loading}>
                <thead>
                  <tr><th scope="col">Name</th><th scope="col">Subject</th><th scope="col">MJML</th><th scope="col">Updated</th></tr>
                </thead>
                <tbody>
                  {page.items.map((template) => (
                    <tr key={template.id}>
                      <td class="wrap">
                        <a href={hrefOf(`templates/${encodeURIComponent(template.id)}`)} onClick={onLinkClick(`templates/${encodeURIComponent(template.id)}`)}>
                          {template.name}
                        </a>
                      </td>
                      <td class="wrap">{template.subject === "" ? "—" : template.subject}</td>
                      <td>{template.mjml === null ? "No" : "Yes"}</td>
                      <td><When iso={template.updated_at} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </ScrollTable>
            <Pager label="Template pages" total={page.total} offset={offset} limit={PAGE_SIZE} onOffset={setOffset} busy={templates.loading} />
          </>
        )}
    </section>
  )
}
