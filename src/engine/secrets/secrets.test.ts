import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bip39English } from './bip39-english.ts';
import { SECRET_RULE_EXAMPLES } from './secrets.examples.ts';
import {
  hasTwelveWordRun,
  isProbablyText,
  maskSecret,
  SECRET_RULES,
  scanSecretsInText,
  validateBip39Checksum,
} from './secrets.ts';

/** Builds a valid 12-word mnemonic from 16 bytes of entropy (BIP-39). */
function mnemonicFrom(entropy: Buffer): string {
  const hash = createHash('sha256').update(entropy).digest();
  const bits =
    [...entropy].map((b) => b.toString(2).padStart(8, '0')).join('') +
    hash[0]!.toString(2).padStart(8, '0').slice(0, 4);
  const words: string[] = [];
  for (let i = 0; i < 12; i++)
    words.push(bip39English()[Number.parseInt(bits.slice(i * 11, i * 11 + 11), 2)]!);
  return words.join(' ');
}

const ids = (path: string, text: string): string[] => scanSecretsInText(path, text).map((m) => m.meta.id);
const PK = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';

describe('scanSecretsInText', () => {
  it('finds cloud and SaaS tokens', () => {
    const text = [
      'AWS_ACCESS_KEY_ID=AKIAQYLPMN5HHHFPZAM2',
      'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
      `token: ghp_${'a1B2c3D4e5'.repeat(3)}abcdef`,
      `SLACK=xoxb-123456789012-1234567890123-${'Ab1'.repeat(8)}`,
      `stripe = "sk_live_${'4eC39HqLyjWDarjtT1zdp7dc'}"`,
      `maps: AIza${'SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY'}`,
      '-----BEGIN RSA PRIVATE KEY-----',
    ].join('\n');
    expect(ids('config/settings.yml', text)).toEqual([
      'secret.aws-access-key',
      'secret.aws-secret-key',
      'secret.github-token',
      'secret.slack-token',
      'secret.stripe-key',
      'secret.google-api-key',
      'secret.pem-private-key',
    ]);
  });

  it('finds raw private keys in .env files, hardhat configs and scripts', () => {
    expect(ids('.env', `PRIVATE_KEY=0x${PK}`)).toEqual(['secret.eth-private-key']);
    expect(ids('hardhat.config.js', `  accounts: ["0x${PK}"],`)).toEqual(['secret.eth-private-key']);
    expect(ids('scripts/deploy.ts', `const wallet = new ethers.Wallet("${PK}", provider);`)).toEqual([
      'secret.eth-private-key',
    ]);
  });

  it('does not flag bytes32 constants, hashes or out-of-range scalars', () => {
    const sol = `contract C {
  bytes32 constant ROLE = 0x${PK};
  bytes32 public merkleRoot = 0x${PK};
  uint constant N = 0x${PK};
}`;
    expect(ids('contracts/C.sol', sol)).toEqual([]);
    expect(ids('test/fixtures.json', `{"txHash": "0x${PK}", "blockHash": "0x${PK}"}`)).toEqual([]);
    expect(ids('.env', `PRIVATE_KEY=0x${'f'.repeat(64)}`)).toEqual([]);
    expect(ids('.env.example', `PRIVATE_KEY=YOUR_PRIVATE_KEY\nETHERSCAN_API_KEY=\${ETHERSCAN}`)).toEqual([]);
    expect(ids('notes.md', `the value 0x${PK} appears here`)).toEqual([]);
  });

  it('finds RPC URLs with keys and explorer API keys', () => {
    expect(
      ids('hardhat.config.ts', 'url: "https://mainnet.infura.io/v3/9aa3d95b3bc440fa88ea12eaa4456161",'),
    ).toEqual(['secret.rpc-url-key']);
    expect(ids('.env', 'RPC=https://eth-mainnet.g.alchemy.com/v2/Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6')).toEqual([
      'secret.rpc-url-key',
    ]);
    expect(ids('.env', 'ETHERSCAN_API_KEY=1QWERTYUIOPASDFGHJKLZXCVBNM12345X6')).toEqual([
      'secret.explorer-api-key',
    ]);
  });

  it('validates BIP-39 checksums and finds mnemonics', () => {
    const phrase = mnemonicFrom(Buffer.from('00112233445566778899aabbccddeeff', 'hex'));
    expect(validateBip39Checksum(phrase.split(' '))).toBe(true);
    const broken = phrase.split(' ');
    broken[11] = broken[11] === 'zoo' ? 'abandon' : 'zoo';
    expect(validateBip39Checksum(broken)).toBe(false);
    expect(
      validateBip39Checksum(
        'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'.split(
          ' ',
        ),
      ),
    ).toBe(true);
    expect(ids('scripts/keys.js', `const words = "${phrase}";`)).toEqual(['secret.bip39-mnemonic']);
    // Twelve list words without a valid checksum and without context are ordinary prose.
    expect(ids('README.md', 'we can build a simple system that will help you find the right answer')).toEqual(
      [],
    );
  });

  it('finds a key or a seed phrase among the lines of a Solidity file that cannot hold one', () => {
    const sol = `// deployer private key: 0x${PK}
contract C {
  bytes32 constant H = 0x${PK};
}`;
    expect(scanSecretsInText('contracts/C.sol', sol).map((m) => [m.meta.id, m.line])).toEqual([
      ['secret.eth-private-key', 1],
    ]);
    const phrase = mnemonicFrom(Buffer.from('00112233445566778899aabbccddeeff', 'hex'));
    const withPhrase = `/// @notice Twelve plain words of prose in a comment are not yet a seed phrase here.
/// seed: ${phrase}
contract D {}`;
    expect(scanSecretsInText('contracts/D.sol', withPhrase).map((m) => [m.meta.id, m.line])).toEqual([
      ['secret.bip39-mnemonic', 2],
    ]);
  });

  it('rates the well-known development mnemonic informational', () => {
    const m = scanSecretsInText(
      'hardhat.config.js',
      'mnemonic: "test test test test test test test test test test test junk"',
    );
    expect(m.map((x) => [x.meta.id, x.severity])).toEqual([['secret.bip39-mnemonic', 'informational']]);
  });

  it('masks every value in its output', () => {
    const [m] = scanSecretsInText('.env', `PRIVATE_KEY=0x${PK}`);
    expect(m!.masked).toBe('0x4c…');
    expect(m!.maskedLine).toBe('PRIVATE_KEY=0x4c…');
    expect(JSON.stringify(m)).not.toContain(PK.slice(4, 20));
    expect(maskSecret('AKIAQYLPMN5HHHFPZAM2')).toBe('AKIA…');
  });
});

describe('isProbablyText', () => {
  it('rejects binary content', () => {
    expect(isProbablyText(Buffer.from('pragma solidity ^0.8.0;\n'))).toBe(true);
    expect(isProbablyText(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]))).toBe(false);
  });

  it('finds twelve words in a row exactly where the regular expression does', () => {
    const twelveWords = /(?:[a-z]{3,8}[ \t]+){11}[a-z]{3,8}/;
    // Runs of letters of every length around 3–8, mostly single spaces between them, sometimes
    // tabs, newlines, capitals or punctuation: about a quarter of the texts hold twelve words.
    const word = fc
      .oneof(
        { weight: 20, arbitrary: fc.integer({ min: 3, max: 8 }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 12 }) },
      )
      .map((n) => 'abcdefghijklmnopqrstuvwxyz'.slice(0, n));
    const separator = fc.oneof(
      { weight: 30, arbitrary: fc.constant(' ') },
      { weight: 2, arbitrary: fc.constantFrom('\t', '  ', ' \t') },
      { weight: 1, arbitrary: fc.constantFrom('\n', 'X', '.', ' X ', '') },
    );
    const text = fc
      .tuple(
        fc.constantFrom('', 'Xq', ' '),
        fc.array(fc.tuple(word, separator), { minLength: 8, maxLength: 20 }),
      )
      .map(([head, parts]) => head + parts.map(([w, s]) => w + s).join(''));
    let positives = 0;
    fc.assert(
      fc.property(text, (t) => {
        const expected = twelveWords.test(t);
        if (expected) positives++;
        expect(hasTwelveWordRun(t)).toBe(expected);
      }),
      { numRuns: 3000, seed: 15 },
    );
    expect(positives).toBeGreaterThan(100);
    expect(hasTwelveWordRun('abandon '.repeat(11) + 'about')).toBe(true);
    expect(hasTwelveWordRun('abandon '.repeat(10) + 'about')).toBe(false);
  });
});

describe('the examples of each secret rule', () => {
  it('document exactly the secret rules', () => {
    expect(Object.keys(SECRET_RULE_EXAMPLES).sort()).toEqual(
      Object.values(SECRET_RULES)
        .map((m) => m.id)
        .sort(),
    );
  });

  for (const [id, example] of Object.entries(SECRET_RULE_EXAMPLES)) {
    const path = example.path ?? '.env';
    describe(id, () => {
      it('reports the vulnerable example', () => {
        expect(ids(path, example.vulnerable)).toContain(id);
      });
      it('stays silent on the safe example', () => {
        expect(ids(path, example.safe)).not.toContain(id);
      });
      it('names at least one idiom it accepts as safe', () => {
        expect(example.safeIdioms.length).toBeGreaterThan(0);
      });
    });
  }
});
