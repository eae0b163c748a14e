/** The console's entry: renders into #app of the built index.html (no inline script anywhere). */
import { render } from "preact"
import { App } from "./App.tsx"
import "./styles.css"

const root = document.getElementById("app")
if (root !== null) render(<App />, root)
