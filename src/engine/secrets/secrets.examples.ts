/**
 * Examples and safe idioms of the secret rules (docs/engine-rules.md; secrets.test.ts runs them).
 * Every credential here is made up, and written in pieces so that no scanner of this repository
 * mistakes the source for a leak; the rules doc shows each reported value masked.
 */
import type { RuleExamples } from '../types.ts';

/** What no secret rule reports (the `PLACEHOLDER` filter of secrets.ts). */
const PLACEHOLDERS =
  'Placeholder values: ones that start with `xxxx`, `00000000`, `your_`, `changeme`, `replaceme`, `dummy`, `sample`, `placeholder`, `todo`, `insert`, `${`, `<` or `{{`, and ones with a character repeated eight times in a row.';
const FROM_ENVIRONMENT =
  'Values read from the environment or a secret store at run time (no literal in the file).';

/** The AWS documentation's example key pair. */
const AWS_KEY_ID = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');
const AWS_SECRET = ['wJalrXUtnFEMI', '/K7MDENG/', 'bPxRfiCYEXAMPLEKEY'].join('');
/** The web3.js documentation's example private key. */
const ETH_KEY = ['4c0883a69102937d6231471b5dbb6204', 'fe5129617082792ae468d01a3f362318'].join('');
/** The BIP-39 phrase of all-zero entropy (valid checksum). */
const MNEMONIC = `${'abandon '.repeat(11)}about`;

export const SECRET_RULE_EXAMPLES: RuleExamples = {
  'secret.aws-access-key': {
    safeIdioms: [PLACEHOLDERS, FROM_ENVIRONMENT],
    path: '.env',
    vulnerable: `AWS_ACCESS_KEY_ID=${AWS_KEY_ID}\n`,
    safe: `AWS_ACCESS_KEY_ID=AKIA${'X'.repeat(16)}\n`,
  },
  'secret.aws-secret-key': {
    impactRationale: 'With the key id, the secret key signs any request the IAM user may make.',
    safeIdioms: [
      PLACEHOLDERS,
      FROM_ENVIRONMENT,
      'A 40-character value not named an AWS secret or private key.',
    ],
    path: 'config/aws.ini',
    vulnerable: `[default]\naws_secret_access_key = ${AWS_SECRET}\n`,
    safe: `[default]\naws_secret_access_key = ${'x'.repeat(40)}\n`,
  },
  'secret.github-token': {
    safeIdioms: [PLACEHOLDERS, FROM_ENVIRONMENT],
    path: '.github/release.yml',
    vulnerable: `token: ${['gh', 'p_'].join('')}${'a1B2c3D4e5'.repeat(3)}abcdef\n`,
    safe: `token: ${['gh', 'p_'].join('')}${'x'.repeat(36)}\n`,
  },
  'secret.slack-token': {
    safeIdioms: [PLACEHOLDERS, FROM_ENVIRONMENT],
    path: '.env',
    vulnerable: `SLACK_TOKEN=${['xo', 'xb-'].join('')}123456789012-1234567890123-${'Ab1'.repeat(8)}\n`,
    safe: `SLACK_TOKEN=${['xo', 'xb-'].join('')}${'x'.repeat(24)}\n`,
  },
  'secret.stripe-key': {
    impactRationale: 'A live secret key moves real money: charges, refunds and payouts.',
    safeIdioms: [PLACEHOLDERS, FROM_ENVIRONMENT, 'Test-mode keys (`sk_test_…`, `rk_test_…`).'],
    path: 'config/payments.yml',
    vulnerable: `stripe_key: ${['sk', 'live', '4eC39HqLyjWDarjtT1zdp7dc'].join('_')}\n`,
    safe: `stripe_key: sk_test_${'x'.repeat(24)}\n`,
  },
  'secret.google-api-key': {
    impactRationale:
      'Google API keys are often restricted to some APIs and referrers; others can still spend their quota.',
    safeIdioms: [PLACEHOLDERS, FROM_ENVIRONMENT],
    path: 'config/maps.yml',
    vulnerable: `maps_key: ${['AI', 'za'].join('')}SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY\n`,
    safe: `maps_key: ${['AI', 'za'].join('')}${'X'.repeat(35)}\n`,
  },
  'secret.openai-key': {
    safeIdioms: [PLACEHOLDERS, FROM_ENVIRONMENT],
    path: '.env',
    vulnerable: `OPENAI_API_KEY=${['sk', 'proj'].join('-')}-Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c2\n`,
    safe: `OPENAI_API_KEY=${['sk', 'proj'].join('-')}-${'x'.repeat(44)}\n`,
  },
  'secret.npm-token': {
    safeIdioms: [PLACEHOLDERS, FROM_ENVIRONMENT],
    path: '.npmrc',
    vulnerable: `//registry.npmjs.org/:_authToken=${['np', 'm_'].join('')}Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8\n`,
    safe: `//registry.npmjs.org/:_authToken=${['np', 'm_'].join('')}${'x'.repeat(36)}\n`,
  },
  'secret.sendgrid-key': {
    safeIdioms: [PLACEHOLDERS, FROM_ENVIRONMENT],
    path: '.env',
    vulnerable: `SENDGRID_API_KEY=${['S', 'G.'].join('')}Q1w2E3r4T5y6U7i8O9p0A1.Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c\n`,
    safe: `SENDGRID_API_KEY=${['S', 'G.'].join('')}${'x'.repeat(22)}.${'x'.repeat(43)}\n`,
  },
  'secret.pem-private-key': {
    impactRationale:
      'Whoever holds the private key can impersonate its owner (a server, a signer, a deploy key).',
    safeIdioms: ['Public keys and certificates (`BEGIN PUBLIC KEY`, `BEGIN CERTIFICATE`).', FROM_ENVIRONMENT],
    path: 'deploy/key.pem',
    vulnerable: `-----BEGIN RSA ${'PRIVATE'} KEY-----\n(key material)\n-----END RSA ${'PRIVATE'} KEY-----\n`,
    safe: '-----BEGIN PUBLIC KEY-----\n(key material)\n-----END PUBLIC KEY-----\n',
  },
  'secret.eth-private-key': {
    impactRationale:
      'Whoever reads the repository controls the account and everything it owns or administers.',
    safeIdioms: [
      PLACEHOLDERS,
      FROM_ENVIRONMENT,
      '64 hex digits without a key name on the line (in `.env` files: before the value), or named as a hash, root, salt, topic, selector, digest, nonce, transaction, signature or slot.',
      'In `.sol` files, any value on a line that does not say private key (bytes32 constants, Merkle roots).',
      'Values outside the range of secp256k1 private keys, and values of one repeated digit.',
    ],
    path: '.env',
    vulnerable: `DEPLOYER_PRIVATE_KEY=0x${ETH_KEY}\n`,
    safe: 'DEPLOYER_PRIVATE_KEY=YOUR_PRIVATE_KEY\nDEPLOY_TX_HASH=0x432ae8447ac5b4760418e11c68433c86558b94debd1a49a1d3cc1a5015935404\n',
  },
  'secret.bip39-mnemonic': {
    impactRationale:
      "The phrase derives every account of the wallet. Hardhat's well-known development phrase (`test test … junk`) is reported Informational.",
    safeIdioms: [
      FROM_ENVIRONMENT,
      'Fewer than 12 words of the BIP-39 list in a row.',
      'A run of list words with an invalid checksum, on a line that does not mention a mnemonic, seed, phrase, secret or wallet.',
    ],
    path: '.env',
    vulnerable: `MNEMONIC="${MNEMONIC}"\n`,
    safe: 'MNEMONIC="your twelve word seed phrase goes here"\n',
  },
  'secret.rpc-url-key': {
    impactRationale: 'Others can spend the endpoint quota or read its usage; the key moves no funds.',
    safeIdioms: [FROM_ENVIRONMENT, 'Endpoint URLs without a key (public RPC endpoints).'],
    path: 'hardhat.config.ts',
    vulnerable: `const url = "https://mainnet.infura.io/v3/${'9aa3d95b3bc440fa88ea12eaa4456161'}";\n`,
    safe: 'const url = process.env.MAINNET_RPC_URL;\n',
  },
  'secret.explorer-api-key': {
    impactRationale:
      'An explorer key only reads public data and verifies contracts; others can spend its rate limit.',
    safeIdioms: [
      PLACEHOLDERS,
      FROM_ENVIRONMENT,
      'Values that are not 34 upper-case letters and digits with at least one of each, or not next to an explorer key name (`ETHERSCAN…`, `BSCSCAN…`, `apiKey`, …).',
    ],
    path: '.env',
    vulnerable: `ETHERSCAN_API_KEY=${'1QWERTYUIOPASDFGHJKLZXCVBNM'}12345X6\n`,
    safe: 'ETHERSCAN_API_KEY=YOUR_ETHERSCAN_API_KEY\n',
  },
};
