/**
 * Postfix as the outbound benchmark's reference MTA (bench/outbound.ts): installed from Debian's
 * packages when missing, then run as a private instance from its own config_directory and
 * queue_directory in a temporary folder — smtpd on a loopback port only, every message relayed
 * to `relayhost = [127.0.0.1]:<sink port>`, Postfix's default concurrency, no local delivery, no
 * DKIM — and stopped afterwards. The machine's own Postfix (if any) is left alone.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { waitForTcp } from "./lib.ts"

const POSTFIX = "/usr/sbin/postfix"
const POLICY_RC = "/usr/sbin/policy-rc.d"

/**
 * Installs the `postfix` package when it is not there (root only): no debconf questions ("No
 * configuration": no /etc/postfix/main.cf, nothing listening), and a policy-rc.d that forbids the
 * package's scripts to start a daemon on port 25 (removed again when this put it there).
 */
export const ensurePostfix = () => {
  if (fs.existsSync(POSTFIX)) return
  if (process.getuid?.() !== 0) throw new Error("Postfix is not installed and installing it needs root: apt-get install postfix")
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  const ownPolicy = !fs.existsSync(POLICY_RC)
  if (ownPolicy) fs.writeFileSync(POLICY_RC, "#!/bin/sh\n# bench/postfix.ts: no daemon starts while packages install\nexit 101\n", { mode: 0o755 })
  try {
    execFileSync("debconf-set-selections", { input: "postfix postfix/main_mailer_type select No configuration\n", env })
    console.log("installing Postfix from Debian's packages (apt-get update, apt-get install postfix) …")
    execFileSync("apt-get", ["update", "-qq"], { env, stdio: ["ignore", "ignore", "inherit"] })
    execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "postfix"], { env, stdio: ["ignore", "ignore", "inherit"] })
  } finally {
    if (ownPolicy) fs.rmSync(POLICY_RC, { force: true })
  }
}

/** Every service Postfix's own master.cf lists that a relay needs, none chrooted (the queue is a temporary folder). */
const masterCf = (smtpPort: number) =>
  [
    `127.0.0.1:${smtpPort} inet n - n - - smtpd`,
    "pickup unix n - n 60 1 pickup",
    "cleanup unix n - n - 0 cleanup",
    "qmgr unix n - n 300 1 qmgr",
    "tlsmgr unix - - n 1000? 1 tlsmgr",
    "rewrite unix - - n - - trivial-rewrite",
    "bounce unix - - n - 0 bounce",
    "defer unix - - n - 0 bounce",
    "trace unix - - n - 0 bounce",
    "verify unix - - n - 1 verify",
    "flush unix n - n 1000? 0 flush",
    "proxymap unix - - n - - proxymap",
    "proxywrite unix - - n - 1 proxymap",
    "smtp unix - - n - - smtp",
    "relay unix - - n - - smtp",
    "showq unix n - n - - showq",
    "error unix - - n - - error",
    "retry unix - - n - - error",
    "discard unix - - n - - discard",
    "local unix - n n - - local",
    "anvil unix - - n - 1 anvil",
    "scache unix - - n - 1 scache",
    "postlog unix-dgram n - n - 1 postlogd"
  ].join("\n") + "\n"

/** A relay for loopback clients to the sink, and nothing else. */
const mainCf = (dir: string, sinkPort: number) =>
  [
    "compatibility_level = 3.6",
    `queue_directory = ${dir}/queue`,
    `data_directory = ${dir}/data`,
    `maillog_file = ${dir}/maillog`,
    `maillog_file_prefixes = ${dir}`,
    "myhostname = postfix.bench.test",
    "mydomain = bench.test",
    "inet_interfaces = 127.0.0.1",
    "inet_protocols = ipv4",
    "mynetworks = 127.0.0.0/8",
    "mydestination =",
    "local_recipient_maps =",
    "local_transport = error:no local delivery in the benchmark",
    "alias_maps =",
    "alias_database =",
    `relayhost = [127.0.0.1]:${sinkPort}`,
    "smtputf8_enable = no",
    "biff = no"
  ].join("\n") + "\n"

export interface PostfixInstance {
  /** smtpd's loopback port. */
  readonly port: number
  readonly stop: () => void
}

/** Starts a private Postfix relaying to the sink on `sinkPort`, its smtpd on `port`. */
export const startPostfix = async (options: { readonly port: number; readonly sinkPort: number }): Promise<PostfixInstance> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-postfix-"))
  // Postfix's daemons run as its mail_owner and must reach the queue below this folder.
  fs.chmodSync(dir, 0o755)
  fs.mkdirSync(path.join(dir, "queue"), { mode: 0o755 })
  fs.writeFileSync(path.join(dir, "main.cf"), mainCf(dir, options.sinkPort))
  fs.writeFileSync(path.join(dir, "master.cf"), masterCf(options.port))
  // Its messages (and postfix-script's ownership notes about a queue it just made) go to the maillog.
  const postfix = (command: string) => execFileSync(POSTFIX, ["-c", dir, command], { stdio: "ignore" })
  const stop = () => {
    try {
      postfix("stop")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
  try {
    postfix("start")
    await waitForTcp(options.port, 30_000)
  } catch (error) {
    const log = path.join(dir, "maillog")
    if (fs.existsSync(log)) console.error(fs.readFileSync(log, "utf8").slice(-4000))
    try {
      stop()
    } catch {
      // It never started: nothing to stop.
    }
    throw error
  }
  return { port: options.port, stop }
}
