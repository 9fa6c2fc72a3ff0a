/**
 * Secrets in any text file: cloud and SaaS tokens, PEM private keys, and what web3 projects leak
 * that common scanners miss — raw secp256k1 private keys, BIP-39 mnemonics (checksum-validated),
 * RPC URLs with keys and block-explorer API keys. Values are masked in every output.
 */
import { createHash } from 'node:crypto';
import type { RuleMeta, Severity } from '../types.ts';
import { bip39Index } from './bip39-english.ts';

export interface SecretMatch {
  meta: RuleMeta;
  line: number;
  /** The line with the secret value masked. */
  maskedLine: string;
  /** The masked value (first 4 characters and an ellipsis). */
  masked: string;
  severity?: Severity;
  message: string;
}

/** Files larger than this are not scanned for secrets (generated bundles, data dumps). */
export const MAX_SECRET_FILE_BYTES = 1024 * 1024;

function meta(
  id: string,
  title: string,
  severity: Severity,
  description: string,
  remediation?: string,
): RuleMeta {
  return {
    id,
    title,
    description,
    remediation:
      remediation ??
      'Revoke the credential now (it is in the repository history), issue a new one, and load it from a secret store or an environment variable kept out of version control.',
    severity,
    confidence: 'high',
    category: 'other',
    cwe: 'CWE-798',
    scanType: 'lite',
  };
}

export const SECRET_RULES = {
  awsAccessKey: meta(
    'secret.aws-access-key',
    'AWS access key',
    'high',
    'An AWS access key id is committed in the source.',
  ),
  awsSecretKey: meta(
    'secret.aws-secret-key',
    'AWS secret access key',
    'critical',
    'An AWS secret access key is committed in the source.',
  ),
  githubToken: meta(
    'secret.github-token',
    'GitHub token',
    'high',
    'A GitHub personal access, OAuth or app token is committed in the source.',
  ),
  slackToken: meta(
    'secret.slack-token',
    'Slack token or webhook',
    'high',
    'A Slack token or incoming-webhook URL is committed in the source.',
  ),
  stripeKey: meta(
    'secret.stripe-key',
    'Stripe live secret key',
    'critical',
    'A Stripe live secret or restricted key is committed in the source.',
  ),
  googleApiKey: meta(
    'secret.google-api-key',
    'Google API key',
    'medium',
    'A Google API key is committed in the source.',
  ),
  openaiKey: meta(
    'secret.openai-key',
    'OpenAI API key',
    'high',
    'An OpenAI API key is committed in the source.',
  ),
  npmToken: meta(
    'secret.npm-token',
    'npm access token',
    'high',
    'An npm access token is committed in the source.',
  ),
  sendgridKey: meta(
    'secret.sendgrid-key',
    'SendGrid API key',
    'high',
    'A SendGrid API key is committed in the source.',
  ),
  pemPrivateKey: meta(
    'secret.pem-private-key',
    'Private key (PEM)',
    'critical',
    'A PEM-encoded private key is committed in the source.',
  ),
  ethPrivateKey: meta(
    'secret.eth-private-key',
    'Ethereum private key',
    'critical',
    'A raw secp256k1 private key (64 hex digits) is committed where a deployer or signer key belongs. Whoever reads the repository controls that account and everything it owns or administers.',
    'Move the funds and roles of that account to a new key now, then load keys from a hardware wallet, a keystore or an environment variable kept out of version control.',
  ),
  mnemonic: meta(
    'secret.bip39-mnemonic',
    'Wallet mnemonic (BIP-39 seed phrase)',
    'critical',
    'A BIP-39 seed phrase is committed in the source. It derives every account of the wallet.',
    'Treat every account of that wallet as compromised: move funds and roles to a new wallet, and keep seed phrases out of version control.',
  ),
  rpcUrlKey: meta(
    'secret.rpc-url-key',
    'RPC endpoint URL with an API key',
    'medium',
    "An Infura, Alchemy or QuickNode endpoint URL containing the project's API key is committed in the source; others can spend its quota or read its usage.",
  ),
  explorerKey: meta(
    'secret.explorer-api-key',
    'Block-explorer API key',
    'low',
    'An Etherscan-family API key is committed in the source.',
  ),
};

/** The first 4 characters and an ellipsis: enough to recognise a key, never enough to use it. */
export function maskSecret(value: string): string {
  return `${value.slice(0, 4)}…`;
}

/** Values that are templates, not credentials (`YOUR_KEY`, `xxxxxxxx`, `${KEY}`, `<key>`). */
const PLACEHOLDER =
  /^(?:x{4,}|0{8,}|your[_-]?|change[_-]?me|replace[_-]?me|dummy|sample|placeholder|todo|insert|\$\{|<|\{\{)/i;

interface Pattern {
  meta: RuleMeta;
  re: RegExp;
  /** The capture group holding the secret (0 = whole match). */
  group?: number;
}

const PATTERNS: Pattern[] = [
  { meta: SECRET_RULES.awsAccessKey, re: /\b((?:AKIA|ASIA)[0-9A-Z]{16})\b/g, group: 1 },
  {
    meta: SECRET_RULES.awsSecretKey,
    re: /aws.{0,20}?(?:secret|private).{0,20}?['"=:\s]\s*['"]?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    group: 1,
  },
  {
    meta: SECRET_RULES.githubToken,
    re: /\b(gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b/g,
    group: 1,
  },
  {
    meta: SECRET_RULES.slackToken,
    re: /\b(xox[baprs]-[A-Za-z0-9-]{10,}|https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]+)/g,
    group: 1,
  },
  { meta: SECRET_RULES.stripeKey, re: /\b((?:sk|rk)_live_[0-9a-zA-Z]{24,})\b/g, group: 1 },
  { meta: SECRET_RULES.googleApiKey, re: /\b(AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])/g, group: 1 },
  {
    meta: SECRET_RULES.openaiKey,
    re: /\b(sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|sk-proj-[A-Za-z0-9_-]{40,})/g,
    group: 1,
  },
  { meta: SECRET_RULES.npmToken, re: /\b(npm_[A-Za-z0-9]{36})\b/g, group: 1 },
  { meta: SECRET_RULES.sendgridKey, re: /\b(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})\b/g, group: 1 },
  {
    meta: SECRET_RULES.pemPrivateKey,
    re: /-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----/g,
    group: 1,
  },
  {
    meta: SECRET_RULES.rpcUrlKey,
    re: /https?:\/\/[a-z0-9.-]*(?:infura\.io\/v3\/([0-9a-f]{32})|alchemy(?:api)?\.(?:com|io)\/v2\/([A-Za-z0-9_-]{20,})|quiknode\.pro\/([0-9a-f]{30,}))/gi,
  },
];

/** Each pattern without its `g` flag: whether a text holds a match at all (no `lastIndex`). */
const PATTERN_TESTS = PATTERNS.map((p) => new RegExp(p.re.source, p.re.flags.replace('g', '')));

/** secp256k1 group order: a private key is a scalar in [1, n-1]. */
const SECP256K1_N = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');

const PRIVATE_KEY_WORDS = /priv(ate)?[_\s-]?key/i;
const KEY_CONTEXT =
  /priv(ate)?[_\s-]?key|\bpk\b|_PK\b|secret|signer|deployer|wallet|account|mnemonic|accounts\s*:|new\s+(ethers\.)?Wallet\s*\(|fromPrivateKey|privateKeyToAccount|--private-key/i;
const HASH_CONTEXT =
  /hash|keccak|sha\d|root|salt|topic|selector|codehash|init_?code|bytes32|digest|nonce|\btx\b|txid|signature|event|slot|magic|seed\s*=\s*0x|address\s*\(/i;

/**
 * Whether `text` matches `/(?:[a-z]{3,8}[ \t]+){11}[a-z]{3,8}/` (twelve lowercase words in a row:
 * a mnemonic may be there), in one linear pass. The regular expression backtracks on every run of
 * words in comments and took three times as long. Its first word may be the end of a longer run of
 * letters and its last the start of one; the ten between must be whole runs of 3 to 8 letters.
 */
export function hasTwelveWordRun(text: string): boolean {
  // Words in the chain that ends with the current run of letters (0: none).
  let chain = 0;
  // Whether the characters since the last run of letters are all spaces or tabs.
  let spaced = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 122) {
      const start = i;
      while (i < n && text.charCodeAt(i) >= 97 && text.charCodeAt(i) <= 122) i++;
      const len = i - start;
      const before = spaced ? chain : 0;
      if (len >= 3 && before >= 11) return true;
      chain = len >= 3 && len <= 8 ? before + 1 : len >= 3 ? 1 : 0;
      spaced = false;
      continue;
    }
    if (c === 32 || c === 9) {
      // Spaces and tabs after a run of letters keep its chain (any other character has reset it).
      spaced = chain > 0;
    } else {
      chain = 0;
      spaced = false;
    }
    i++;
  }
  return false;
}

/** Scans one text file; `.sol` files only yield keys their own text calls private keys. */
export function scanSecretsInText(path: string, text: string): SecretMatch[] {
  const out: SecretMatch[] = [];
  const isSolidity = path.endsWith('.sol');
  const isEnv = /(^|\/)\.env(\.[\w-]+)?$|\.env$/.test(path);
  // One pass over the whole text per detector decides which detectors run line by line.
  const patterns = PATTERNS.filter((_, i) => PATTERN_TESTS[i]!.test(text));
  // A Solidity file yields a raw key only on a line that calls it a private key.
  const mayHoldHex = (!isSolidity || PRIVATE_KEY_WORDS.test(text)) && /[0-9a-fA-F]{64}/.test(text);
  const mayHoldExplorerKey = /(scan|apiKey)/i.test(text) && /[A-Z0-9]{34}/.test(text);
  const mayHoldWords = hasTwelveWordRun(text);
  if (patterns.length === 0 && !mayHoldHex && !mayHoldExplorerKey && !mayHoldWords) return out;
  const lines = text.split('\n');
  const push = (m: RuleMeta, lineIdx: number, value: string, message: string, severity?: Severity): void => {
    const line = lines[lineIdx] ?? '';
    const masked = maskSecret(value);
    out.push({
      meta: m,
      line: lineIdx + 1,
      maskedLine: line.split(value).join(masked).trim().slice(0, 300),
      masked,
      message,
      ...(severity ? { severity } : {}),
    });
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length > 5000) continue; // minified bundles
    for (const p of patterns) {
      p.re.lastIndex = 0;
      for (const m of line.matchAll(p.re)) {
        const value = p.group !== undefined ? (m[p.group] ?? m[0]) : (m.slice(1).find(Boolean) ?? m[0]);
        if (PLACEHOLDER.test(value) || /(.)\1{7,}/.test(value)) continue;
        const v = p.meta === SECRET_RULES.pemPrivateKey ? m[0] : value;
        push(p.meta, i, v, `${p.meta.title} \`${maskSecret(v)}\` in \`${path}\`.`);
      }
    }
    // Raw secp256k1 private keys: 64 hex digits, in a context that names a key.
    if (mayHoldHex)
      for (const m of line.matchAll(/(?<![0-9a-fA-Fx])(0x)?([0-9a-fA-F]{64})(?![0-9a-fA-F])/g)) {
        const hex = m[2]!;
        const before = line.slice(0, m.index);
        const context = isEnv
          ? /KEY|PRIV|SECRET|PK|MNEMONIC|SIGNER|DEPLOYER|WALLET|ACCOUNT/i.test(before)
          : KEY_CONTEXT.test(line);
        if (!context) continue;
        if (isSolidity && !PRIVATE_KEY_WORDS.test(line)) continue;
        if (HASH_CONTEXT.test(before) && !PRIVATE_KEY_WORDS.test(before)) continue;
        const n = BigInt(`0x${hex}`);
        if (n === 0n || n >= SECP256K1_N || /^(.)\1+$/.test(hex) || /^0{40}/.test(hex)) continue;
        const value = m[0];
        push(
          SECRET_RULES.ethPrivateKey,
          i,
          value,
          `A private key \`${maskSecret(value)}\` is committed in \`${path}\`.`,
        );
      }
    // Etherscan-family keys: 34 upper-case alphanumerics next to an explorer key name.
    if (mayHoldExplorerKey)
      for (const m of line.matchAll(
        /(ETHERSCAN|BSCSCAN|POLYGONSCAN|ARBISCAN|SNOWTRACE|FTMSCAN|BASESCAN|OPTIMISTIC_ETHERSCAN|apiKey)[\w\s"':=]{0,30}?["'=:\s]([A-Z0-9]{34})\b/gi,
      )) {
        const value = m[2]!;
        if (!/[0-9]/.test(value) || !/[A-Z]/.test(value) || value !== value.toUpperCase()) continue;
        push(
          SECRET_RULES.explorerKey,
          i,
          value,
          `A block-explorer API key \`${maskSecret(value)}\` is committed in \`${path}\`.`,
        );
      }
    // BIP-39 mnemonics: 12–24 words of the list in a row (a linear scan, no backtracking regex).
    // A line without twelve words in a row holds no run of twelve of the list.
    if (mayHoldWords && hasTwelveWordRun(line))
      for (const run of listWordRuns(line)) {
        const found = findMnemonic(run);
        if (!found) continue;
        const phrase = found.words.join(' ');
        const context = /mnemonic|seed|phrase|secret|wallet/i.test(line);
        if (!found.checksumValid && !context) continue;
        const wellKnown = phrase === 'test test test test test test test test test test test junk';
        push(
          SECRET_RULES.mnemonic,
          i,
          phrase,
          wellKnown
            ? `The well-known development mnemonic (\`${maskSecret(phrase)}\`) is used in \`${path}\`; never fund its accounts on a public network.`
            : `A ${found.words.length}-word seed phrase \`${maskSecret(phrase)}\`${found.checksumValid ? ' (valid BIP-39 checksum)' : ''} is committed in \`${path}\`.`,
          wellKnown ? 'informational' : undefined,
        );
      }
  }
  return out;
}

/** Runs of at least 12 consecutive BIP-39 words separated only by spaces or tabs. */
function listWordRuns(line: string): string[][] {
  if (line.length < 47) return []; // 12 words of 3+ letters and 11 separators
  const runs: string[][] = [];
  let cur: string[] = [];
  let lastEnd = -1;
  const flush = (): void => {
    if (cur.length >= 12) runs.push(cur);
    cur = [];
  };
  for (const m of line.matchAll(/[A-Za-z0-9_]+/g)) {
    const word = m[0];
    const start = m.index;
    const separated = lastEnd >= 0 && /^[ \t]+$/.test(line.slice(lastEnd, start));
    if (!separated) flush();
    if (bip39Index(word) !== undefined) cur.push(word);
    else flush();
    lastEnd = start + word.length;
  }
  flush();
  return runs;
}

/** The longest run of 12/15/18/21/24 list words in `words`, with its checksum validity. */
function findMnemonic(words: string[]): { words: string[]; checksumValid: boolean } | undefined {
  for (const len of [24, 21, 18, 15, 12]) {
    for (let start = 0; start + len <= words.length; start++) {
      const slice = words.slice(start, start + len);
      if (!slice.every((w) => bip39Index(w) !== undefined)) continue;
      return { words: slice, checksumValid: validateBip39Checksum(slice) };
    }
  }
  return undefined;
}

/** BIP-39: the last ENT/32 bits of the 11-bit word indices are the first bits of sha256(entropy). */
export function validateBip39Checksum(words: string[]): boolean {
  if (![12, 15, 18, 21, 24].includes(words.length)) return false;
  let bits = '';
  for (const w of words) {
    const idx = bip39Index(w);
    if (idx === undefined) return false;
    bits += idx.toString(2).padStart(11, '0');
  }
  const checksumBits = words.length / 3;
  const entropyBits = bits.length - checksumBits;
  const entropy = Buffer.alloc(entropyBits / 8);
  for (let i = 0; i < entropy.length; i++) entropy[i] = Number.parseInt(bits.slice(i * 8, i * 8 + 8), 2);
  const hash = createHash('sha256').update(entropy).digest();
  const hashBits = [...hash].map((b) => b.toString(2).padStart(8, '0')).join('');
  return hashBits.slice(0, checksumBits) === bits.slice(entropyBits);
}

/** Whether a buffer looks like text (no NUL bytes, few control characters in the first 8 KiB). */
export function isProbablyText(buf: Buffer): boolean {
  const n = Math.min(buf.length, 8192);
  let control = 0;
  for (let i = 0; i < n; i++) {
    const c = buf[i]!;
    if (c === 0) return false;
    if (c < 9 || (c > 13 && c < 32)) control++;
  }
  return n === 0 || control / n < 0.05;
}
