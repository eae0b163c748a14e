/**
 * The set-aside third of the sisimai corpus (SOURCES.md): a file is set aside when the first byte
 * of the SHA-256 of its name is divisible by 3. Fixed with the facts, before any rule was written;
 * the set-aside files are never edited and are not looked at while rules are written, so the
 * figure measured on them says how the rules do on bounces they were not written against.
 */
import { createHash } from "node:crypto"

export const isSetAside = (fileName: string): boolean => createHash("sha256").update(fileName).digest()[0]! % 3 === 0
