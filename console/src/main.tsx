/** The console's entry: renders into #app of the built index.html (no inline script anywhere). */
import { render } from "preact"
import { App } from "./App.tsx"
import "./styles.css"

// Also loaded as a module worker (the import preview reads CSV there): no document, nothing to render.
const root = typeof document === "undefined" ? null : document.getElementById("app")
if (root !== null) render(<App />, root)
