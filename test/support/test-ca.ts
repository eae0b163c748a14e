/**
 * A certificate authority made for one test run (openssl, in a temporary directory: node:crypto
 * cannot issue X.509 certificates): its certificate as a file for HERALD_TLS_CA_FILE, and leaf
 * certificates it signs for chosen DNS names (MX hosts, `mta-sts.<domain>` policy hosts).
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export interface KeyAndCert {
  readonly key: string
  readonly cert: string
}

export interface TestCa {
  /** The CA certificate's file (HERALD_TLS_CA_FILE). */
  readonly caFile: string
  readonly caCert: string
  /** A leaf certificate for `names` (subjectAltName DNS entries), signed by the CA. */
  readonly issue: (names: ReadonlyArray<string>) => KeyAndCert
}

const openssl = (dir: string, args: ReadonlyArray<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
/** P-256 keys: generated in milliseconds, where RSA takes a noticeable share of a test's time. */
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

export const makeTestCa = (): TestCa => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-test-ca-"))
  openssl(dir, [
    "req", "-x509", ...EC_KEY, "-days", "2", "-subj", "/CN=Herald Test CA", "-keyout", "ca.key", "-out", "ca.pem",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
  ])
  let serial = 0
  return {
    caFile: path.join(dir, "ca.pem"),
    caCert: fs.readFileSync(path.join(dir, "ca.pem"), "utf8"),
    issue: (names) => {
      serial += 1
      const base = `leaf${serial}`
      fs.writeFileSync(path.join(dir, `${base}.ext`), [
        `subjectAltName=${names.map((n) => `DNS:${n}`).join(",")}`,
        "basicConstraints=CA:FALSE",
        "keyUsage=digitalSignature",
        "extendedKeyUsage=serverAuth"
      ].join("\n"))
      openssl(dir, ["req", ...EC_KEY, "-subj", `/CN=${names[0] ?? "leaf"}`, "-keyout", `${base}.key`, "-out", `${base}.csr`])
      openssl(dir, [
        "x509", "-req", "-in", `${base}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", String(1000 + serial),
        "-days", "1", "-out", `${base}.pem`, "-extfile", `${base}.ext`
      ])
      return { key: fs.readFileSync(path.join(dir, `${base}.key`), "utf8"), cert: fs.readFileSync(path.join(dir, `${base}.pem`), "utf8") }
    }
  }
}
