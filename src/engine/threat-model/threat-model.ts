/**
 * The unattended threat model that precedes every paid scan: what the code exposes (entry points),
 * who may do what (roles), what is at stake (assets), whom it trusts (external calls, delegatecall,
 * oracles) — and the threats that follow, each pointing at code.
 */
import type { FileAnalysis } from '../solidity/analysis.ts';
import { descendants, field, unwrap } from '../solidity/ast.ts';
import { baseIdentifier, type ContractInfo, type FunctionInfo, type VarInfo } from '../solidity/model.ts';
import type { CodeRef, Threat, ThreatModel } from '../types.ts';

export function emptyThreatModel(now: Date = new Date()): ThreatModel {
  return {
    version: 1,
    generatedAt: now.toISOString(),
    summary: {
      files: 0,
      solidityFiles: 0,
      lines: 0,
      contracts: 0,
      entryPoints: 0,
      externalCalls: 0,
      threats: 0,
    },
    contracts: [],
    entryPoints: [],
    roles: [],
    assets: [],
    externalCalls: [],
    upgradeability: [],
    oracles: [],
    trustBoundaries: [],
    threats: [],
  };
}

const PRICE_FEED =
  /^(latestRoundData|latestAnswer|getReserves|consult|getPrice|price0CumulativeLast|price1CumulativeLast|observe|getAssetPrice|peek|read)$/;
const BALANCE_NAME = /balance|deposit|credit|share|stake|fund|holding|owed|reward/i;

/** A code reference in the file being added, optionally inside a contract and function. */
type Ref = (line: number, endLine: number | undefined, contract?: ContractInfo, fn?: FunctionInfo) => CodeRef;

/** Adds what one Solidity file contributes to the model (call once per file, then drop the AST). */
export function addFileToThreatModel(model: ThreatModel, fa: FileAnalysis): void {
  const file = fa.file.path;
  const ref: Ref = (line, endLine, contract, fn) => ({
    file,
    line,
    ...(endLine && endLine !== line ? { endLine } : {}),
    ...(contract ? { contract: contract.name } : {}),
    ...(fn ? { function: fn.name } : {}),
  });
  for (const c of fa.file.contracts) {
    /** The entry points each modifier guards, by modifier name. */
    const guardedBy = new Map<string, string[]>();
    let upgradeable = false;
    for (const fn of c.functions) {
      if (fn.kind === 'modifier') continue;
      if (addFunction(model, fa, c, fn, ref, guardedBy)) upgradeable = true;
    }
    addRoles(model, fa, c, ref, guardedBy);
    const checkers = [...fa.index.functionsOf(c), ...c.modifiers.values()];
    for (const v of c.stateVars.values()) addStateVariable(model, fa, c, v, checkers, ref);
    const payable = c.functions.find((f) => f.mutability === 'payable');
    if (payable)
      model.assets.push({
        contract: c.name,
        name: 'ether balance',
        kind: 'ether',
        ref: ref(payable.line, undefined, c, payable),
      });
    model.contracts.push({
      name: c.name,
      kind: c.kind,
      bases: c.bases,
      upgradeable,
      ref: ref(c.line, undefined, c),
    });
    deriveThreats(model, fa, c, ref);
  }
}

/**
 * What one function contributes: an entry point (noting which modifiers guard it in
 * `guardedBy`), its external calls, upgrade and destruction paths, and the block values it reads.
 * Returns whether it makes its contract upgradeable (a delegatecall or an initializer).
 */
function addFunction(
  model: ThreatModel,
  fa: FileAnalysis,
  c: ContractInfo,
  fn: FunctionInfo,
  ref: Ref,
  guardedBy: Map<string, string[]>,
): boolean {
  const a = fa.analyze(fn);
  const entry = fa.isEntryPoint(fn);
  if (entry) {
    model.entryPoints.push({
      contract: c.name,
      function: fn.name,
      kind: fn.kind,
      visibility: fn.visibility,
      payable: fn.mutability === 'payable',
      guarded: fa.checksCaller(fn),
      modifiers: fn.modifiers.map((m) => m.name),
      ref: ref(fn.line, fn.headerEndLine, c, fn),
    });
    for (const m of fn.modifiers) guardedBy.set(m.name, [...(guardedBy.get(m.name) ?? []), fn.name]);
  }
  let upgradeable = addCalls(model, fa, c, fn, a, ref);
  if (fn.kind === 'function' && /^(initiali[sz]e|init)\w*$/i.test(fn.name) && entry) {
    upgradeable = true;
    model.upgradeability.push({
      contract: c.name,
      pattern: 'initializer',
      detail: `\`${fn.name}\` initializes state outside a constructor`,
      ref: ref(fn.line, undefined, c, fn),
    });
  }
  if (fn.body) addBlockReads(model, fa, c, fn, fn.body, a, ref);
  return upgradeable;
}

const CALLS_OUT = new Set(['call', 'delegatecall', 'callcode', 'staticcall', 'send', 'transfer', 'external']);

/**
 * A function's calls out of the contract (with the trust boundary each crosses, the price feeds
 * they read and the delegatecalls among them) and its `selfdestruct`s. Returns whether it
 * delegatecalls.
 */
function addCalls(
  model: ThreatModel,
  fa: FileAnalysis,
  c: ContractInfo,
  fn: FunctionInfo,
  a: ReturnType<FileAnalysis['analyze']>,
  ref: Ref,
): boolean {
  let delegates = false;
  for (const call of a.calls) {
    const k = call.info.kind;
    if (!CALLS_OUT.has(k)) continue;
    const target = call.info.target ? fa.text(call.info.target) : fa.text(call.info.node);
    const callerControlled = call.info.target
      ? fa.isCallerControlledAddress(a, call.info.target) || fa.isUserInput(call.info.target, a)
      : false;
    const at = ref(call.info.node.line, undefined, c, fn);
    model.externalCalls.push({
      contract: c.name,
      function: fn.name,
      kind: k,
      target: target.slice(0, 120),
      sendsValue: call.info.value !== undefined,
      callerControlledTarget: callerControlled,
      ref: ref(call.info.node.line, call.info.node.endLine, c, fn),
    });
    if (k === 'delegatecall' || k === 'callcode') {
      delegates = true;
      model.upgradeability.push({
        contract: c.name,
        pattern: 'delegatecall',
        detail: `\`${fn.name}\` delegatecalls \`${target.slice(0, 80)}\``,
        ref: at,
      });
    }
    if (k === 'external' && PRICE_FEED.test(call.info.name))
      model.oracles.push({
        contract: c.name,
        kind: 'price-feed',
        detail: `\`${target}.${call.info.name}()\``,
        ref: at,
      });
    if (k !== 'transfer' && k !== 'send')
      model.trustBoundaries.push({
        from: c.name,
        to: callerControlled ? 'caller-chosen contract' : target.slice(0, 80),
        description: `${c.name}.${fn.name} hands control to ${callerControlled ? 'a contract the caller chooses' : `\`${target.slice(0, 80)}\``} (${k})`,
        ref: at,
      });
  }
  for (const call of a.calls) {
    if (call.info.kind === 'builtin' && (call.info.name === 'selfdestruct' || call.info.name === 'suicide'))
      model.upgradeability.push({
        contract: c.name,
        pattern: 'selfdestruct',
        detail: `\`${fn.name}\` can destroy the contract`,
        ref: ref(call.info.node.line, undefined, c, fn),
      });
  }
  return delegates;
}

/** The block values a function body reads (randomness, the timestamp) and its `tx.origin` checks. */
function addBlockReads(
  model: ThreatModel,
  fa: FileAnalysis,
  c: ContractInfo,
  fn: FunctionInfo,
  body: NonNullable<FunctionInfo['body']>,
  a: ReturnType<FileAnalysis['analyze']>,
  ref: Ref,
): void {
  const randomness = descendants(body, 'member_expression', 'identifier', 'call_expression').find((n) =>
    /^(block\.(difficulty|prevrandao|blockhash|coinbase)|blockhash)$/.test(
      fa.text(n.type === 'call_expression' ? (field(n, 'function') ?? n) : n).replace(/\s+/g, ''),
    ),
  );
  if (randomness)
    model.oracles.push({
      contract: c.name,
      kind: 'block-randomness',
      detail: `\`${fa.text(randomness).slice(0, 60)}\``,
      ref: ref(randomness.line, undefined, c, fn),
    });
  const time = descendants(body, 'member_expression', 'identifier').find(
    (n) => n.field !== 'property' && /^(block\.timestamp|now)$/.test(fa.text(n).replace(/\s+/g, '')),
  );
  if (time)
    model.oracles.push({
      contract: c.name,
      kind: 'timestamp',
      detail: `\`${fn.name}\` reads the block timestamp`,
      ref: ref(time.line, undefined, c, fn),
    });
  for (const cond of a.conditions) {
    if (/tx\.origin/.test(fa.text(cond.expr)) && !/msg\.sender/.test(fa.text(cond.expr)))
      model.roles.push({
        contract: c.name,
        name: 'tx.origin',
        kind: 'tx-origin',
        guards: [fn.name],
        ref: ref(cond.expr.line, undefined, c, fn),
      });
  }
}

/** The modifiers that check the caller, as roles with the entry points they guard. */
function addRoles(
  model: ThreatModel,
  fa: FileAnalysis,
  c: ContractInfo,
  ref: Ref,
  guardedBy: Map<string, string[]>,
): void {
  for (const [name, mod] of c.modifiers) {
    if (!fa.checksCaller(mod)) continue;
    model.roles.push({
      contract: c.name,
      name,
      kind: 'modifier',
      guards: guardedBy.get(name) ?? [],
      ref: ref(mod.line, undefined, c, mod),
    });
  }
}

/**
 * A state variable as a role (an address or mapping that a caller check among `checkers` reads)
 * and as an asset (a balance mapping, a token contract).
 */
function addStateVariable(
  model: ThreatModel,
  fa: FileAnalysis,
  c: ContractInfo,
  v: VarInfo,
  checkers: readonly FunctionInfo[],
  ref: Ref,
): void {
  const at = ref(v.line, undefined, c);
  const checked = checkers.some((f) => {
    const a = fa.analyze(f);
    return a.conditions.some(
      (cond) =>
        fa.isCallerCheck(cond.expr, a) &&
        descendants(cond.expr, 'identifier').some((i) => fa.text(i) === v.name),
    );
  });
  if (checked && /^address\b/.test(v.typeText))
    model.roles.push({ contract: c.name, name: v.name, kind: 'owner-variable', guards: [], ref: at });
  else if (checked && v.isMapping)
    model.roles.push({ contract: c.name, name: v.name, kind: 'role-map', guards: [], ref: at });
  if (
    v.isMapping &&
    /=>\s*u?int/.test(v.typeText) &&
    /^mapping\s*\(\s*address/.test(v.typeText) &&
    BALANCE_NAME.test(v.name)
  )
    model.assets.push({ contract: c.name, name: v.name, kind: 'balance-map', ref: at });
  if (
    fa.file.isContractType(v.typeText, fa.index.scope(c, undefined)) &&
    /token|erc20|erc721|asset|coin/i.test(`${v.typeText} ${v.name}`)
  )
    model.assets.push({ contract: c.name, name: v.name, kind: 'token-contract', ref: at });
}

/** The threats a contract's own model entries imply: one per kind, naming every entry of that kind. */
const MODEL_THREATS: Array<{
  /** The contract's entries of the kind, from the model. */
  refs: (model: ThreatModel, contract: string) => CodeRef[];
  threat: (contract: string) => Omit<Threat, 'id' | 'refs'>;
}> = [
  {
    refs: (m, c) =>
      m.upgradeability.filter((u) => u.contract === c && u.pattern === 'delegatecall').map((u) => u.ref),
    threat: (c) => ({
      title: `Code executed in ${c}'s storage context`,
      severity: 'high',
      category: 'access_control',
      description:
        "delegatecall runs foreign code against this contract's storage; the target and the call data must be trusted and fixed.",
    }),
  },
  {
    refs: (m, c) =>
      m.upgradeability.filter((u) => u.contract === c && u.pattern === 'selfdestruct').map((u) => u.ref),
    threat: (c) => ({
      title: `${c} can be destroyed`,
      severity: 'high',
      category: 'access_control',
      description:
        'selfdestruct removes the code and sends the balance away; only a trusted role may reach it.',
    }),
  },
  {
    refs: (m, c) =>
      m.oracles.filter((o) => o.contract === c && o.kind === 'block-randomness').map((o) => o.ref),
    threat: (c) => ({
      title: `Predictable outcomes in ${c}`,
      severity: 'high',
      category: 'bad_randomness',
      description: 'Block values serve as randomness; miners and other contracts can predict or steer them.',
    }),
  },
  {
    refs: (m, c) => m.oracles.filter((o) => o.contract === c && o.kind === 'price-feed').map((o) => o.ref),
    threat: (c) => ({
      title: `Price data trusted by ${c}`,
      severity: 'medium',
      category: 'other',
      description:
        'Spot prices and stale feeds can be manipulated (flash loans) or be out of date; check freshness and use time-weighted prices.',
    }),
  },
  {
    refs: (m, c) => m.roles.filter((r) => r.contract === c && r.kind === 'tx-origin').map((r) => r.ref),
    threat: (c) => ({
      title: `Phishable authorization in ${c}`,
      severity: 'high',
      category: 'access_control',
      description: 'tx.origin authorizes calls; any contract the owner calls can act as the owner.',
    }),
  },
];

/** The threats that follow from a contract's entries in the model and from its code, in a fixed order. */
function deriveThreats(model: ThreatModel, fa: FileAnalysis, c: ContractInfo, ref: Ref): void {
  const add = (t: Omit<Threat, 'id'>): void => {
    model.threats.push({ id: `T${String(model.threats.length + 1).padStart(3, '0')}`, ...t });
  };
  const entries = c.functions.filter((f) => fa.isEntryPoint(f));
  const { drains, reentry } = callsOfEntryPoints(fa, c, entries, ref);
  if (drains.length)
    add({
      title: `Ether leaves ${c.name} through functions anyone can call`,
      severity: 'high',
      category: 'access_control',
      description:
        'These unguarded entry points send ether. Each must pay only what the caller is owed, after debiting it.',
      refs: drains,
    });
  if (reentry.length)
    add({
      title: `Re-entrancy into ${c.name}`,
      severity: 'high',
      category: 'reentrancy',
      description:
        'Control passes to another contract before state is updated; a malicious callee can re-enter.',
      refs: reentry,
    });
  for (const kind of MODEL_THREATS) {
    const refs = kind.refs(model, c.name);
    if (refs.length) add({ ...kind.threat(c.name), refs });
  }
  const privileged = entries.filter(
    (f) =>
      fa.checksCaller(f) &&
      (fa.writesState(f) || fa.analyze(f).calls.some((x) => x.info.value !== undefined)),
  );
  if (privileged.length) {
    const named = privileged
      .slice(0, 6)
      .map((f) => `\`${f.name}\``)
      .join(', ');
    add({
      title: `Privileged roles of ${c.name}`,
      severity: 'medium',
      category: 'access_control',
      description: `A compromised or malicious privileged account can call ${named}${privileged.length > 6 ? ', ...' : ''}. Keys of these roles need multi-signature or time-locked control.`,
      refs: privileged.map((f) => ref(f.line, undefined, c, f)),
    });
  }
  for (const [name, setters] of redirectableTargets(fa, c)) {
    add({
      title: `Anyone can redirect ${c.name}'s calls to \`${name}\``,
      severity: 'critical',
      category: 'access_control',
      description: `\`${name}\` is the target of external calls and unguarded functions can overwrite it.`,
      refs: setters.map((f) => ref(f.line, undefined, c, f)),
    });
  }
}

/**
 * The calls of a contract's entry points that send ether without a caller check (`drains`), and
 * those a callee can re-enter before the function writes state (`reentry`).
 */
function callsOfEntryPoints(
  fa: FileAnalysis,
  c: ContractInfo,
  entries: readonly FunctionInfo[],
  ref: Ref,
): { drains: CodeRef[]; reentry: CodeRef[] } {
  const drains: CodeRef[] = [];
  const reentry: CodeRef[] = [];
  for (const fn of entries) {
    const a = fa.analyze(fn);
    const guarded = fa.checksCaller(fn);
    for (const call of a.calls) {
      const moves =
        call.info.kind === 'transfer' ||
        call.info.kind === 'send' ||
        (call.info.kind === 'call' && call.info.value !== undefined);
      if (moves && !guarded) drains.push(ref(call.info.node.line, undefined, c, fn));
      if (
        fa.isReentrantCall(a, call) &&
        a.stateWrites.some((w) => a.cfg.reachableFrom(call.node.id).has(w.node.id))
      )
        reentry.push(ref(call.info.node.line, undefined, c, fn));
    }
  }
  return { drains, reentry };
}

/**
 * State variables the contract calls through (`call`, `delegatecall`, external calls) that an
 * entry point without a caller check can overwrite, each with those setters.
 */
function redirectableTargets(fa: FileAnalysis, c: ContractInfo): Map<string, FunctionInfo[]> {
  const stateTargets = new Set<string>();
  for (const fn of c.functions) {
    for (const call of fa.analyze(fn).calls) {
      if (!['call', 'delegatecall', 'external'].includes(call.info.kind) || !call.info.target) continue;
      const b = baseIdentifier(unwrap(call.info.target));
      if (b && fa.analyze(fn).scope.isStateVar(fa.text(b))) stateTargets.add(fa.text(b));
    }
  }
  const out = new Map<string, FunctionInfo[]>();
  for (const name of stateTargets) {
    const setters = fa
      .writersOf(c, name)
      .filter((f) => fa.isEntryPoint(f) && f.kind === 'function' && !fa.checksCaller(f));
    if (setters.length) out.set(name, setters);
  }
  return out;
}

/** Recomputes the summary counts after all files were added. */
export function finalizeThreatModel(
  model: ThreatModel,
  stats: { files: number; solidityFiles: number; lines: number },
): ThreatModel {
  model.summary = {
    ...stats,
    contracts: model.contracts.length,
    entryPoints: model.entryPoints.length,
    externalCalls: model.externalCalls.length,
    threats: model.threats.length,
  };
  return model;
}
