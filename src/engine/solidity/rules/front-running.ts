/** Front-running (SWC-114): transaction-order dependence on approvals, revealed answers, payouts and recipients. */
import { descendants, field, unwrap } from '../ast.ts';
import {
  isValueCall,
  mutatingFunctions,
  norm,
  OWNER_NAME,
  openToAnyone,
  stripAddressCasts,
} from './predicates.ts';
import { defineRule } from './rule.ts';

export const approveRace = defineRule(
  {
    id: 'sol.frontrun.erc20-approve',
    title: 'ERC-20 approve race',
    description:
      '`approve` overwrites an existing allowance. A spender who sees the change in the mempool can spend the old allowance first and then the new one.',
    remediation:
      'Require the allowance to be zero before setting a new non-zero value, or offer `increaseAllowance`/`decreaseAllowance`.',
    severity: 'informational',
    confidence: 'medium',
    category: 'front_running',
    swc: 'SWC-114',
    cwe: 'CWE-362',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      if (fn.name !== 'approve' || fn.params.length !== 2 || !fa.isEntryPoint(fn)) continue;
      const a = fa.analyze(fn);
      const write = a.stateWrites.find(
        (w) => /\[msg\.sender\]\[/.test(norm(fa, w.ast)) && w.ast.parent?.type === 'assignment_expression',
      );
      if (!write) continue;
      // `require(value == 0 || allowance[msg.sender][spender] == 0)` prevents the race.
      const zeroCheck = a.conditions.some((c) => /==0/.test(norm(fa, c.expr)));
      if (zeroCheck) continue;
      ctx.report(meta, fa.statementOf(write.ast), { fn });
    }
  },
);

export const hashGuess = defineRule(
  {
    id: 'sol.frontrun.revealed-solution',
    title: 'Solution submitted in the clear',
    description:
      'The function pays whoever submits an input whose hash matches a stored value. The answer is visible in the mempool, so anyone can copy it with a higher gas price and take the reward.',
    remediation:
      'Use commit-reveal: first commit `hash(answer, sender, salt)`, reveal in a later transaction.',
    severity: 'medium',
    confidence: 'medium',
    category: 'front_running',
    swc: 'SWC-114',
    cwe: 'CWE-362',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      if (!fa.isEntryPoint(fn)) continue;
      const a = fa.analyze(fn);
      if (!a.calls.some(isValueCall)) continue;
      for (const cond of a.conditions) {
        const hashes = descendants(cond.expr, 'call_expression').filter((call) =>
          /^(keccak256|sha3|sha256)$/.test(norm(fa, field(call, 'function') ?? call)),
        );
        if (!hashes.some((h) => fa.isUserInput(h, a) && !/msg\.sender/.test(fa.text(h)))) continue;
        if (!/==/.test(fa.text(cond.expr))) continue;
        ctx.report(meta, fa.statementOf(cond.expr), { fn });
      }
    }
  },
);

export const rewardTod = defineRule(
  {
    id: 'sol.frontrun.mutable-payout',
    title: 'Payout amount can change while a claim is pending',
    description:
      'The amount paid is read from a state variable that another public function can change. Whoever sees a pending claim can reorder transactions so that it is paid a different amount (transaction-order dependence).',
    remediation:
      'Let claimants state the amount they expect (and revert on mismatch), or lock the value once claims are open.',
    severity: 'medium',
    confidence: 'low',
    category: 'front_running',
    swc: 'SWC-114',
    cwe: 'CWE-362',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      for (const fn of c.functions) {
        if (!fa.isEntryPoint(fn) || fn.kind !== 'function') continue;
        const a = fa.analyze(fn);
        for (const call of a.calls) {
          if (!isValueCall(call) || !call.info.value) continue;
          const v = unwrap(call.info.value);
          if (v.type !== 'identifier' || !a.scope.isStateVar(fa.text(v))) continue;
          const name = fa.text(v);
          const sv = a.scope.lookup(name);
          if (!sv || sv.isMapping || sv.isArray) continue;
          if (!openToAnyone(fa, fn)) continue;
          // The classic order dependence: the privileged side changes the payout while a claim is pending.
          const writers = fa
            .writersOf(c, name)
            .filter((w) => w !== fn && fa.isEntryPoint(w) && w.kind === 'function' && fa.checksCaller(w));
          if (writers.length === 0) continue;
          ctx.report(meta, fa.statementOf(call.info.node), {
            fn,
            message: `\`${fn.name}()\` pays \`${name}\`, which \`${writers[0]!.name}()\` can change in a transaction ordered before it.`,
          });
        }
      }
    }
  },
);

export const recipientRace = defineRule(
  {
    id: 'sol.frontrun.recipient-race',
    title: 'Payout recipient set by whoever is first',
    description:
      'A payout goes to an address stored by another public function that anyone can call. Which account is paid depends on the order in which pending transactions are mined (transaction-order dependence); when the recipient is chosen by revealing an answer, others can copy it from the mempool.',
    remediation:
      'Bind the payout to the transaction that earns it (pay in the same call, or use commit-reveal), and do not let a later transaction replace the recipient of a pending payout.',
    severity: 'low',
    confidence: 'low',
    category: 'front_running',
    swc: 'SWC-114',
    cwe: 'CWE-362',
    scanType: 'standard',
    reasoning:
      'Builds the intra-contract view of who writes each state variable: for every payout whose recipient is a stored address, looks for another entry point without caller check that assigns `msg.sender` to that address. Medium when that assignment is gated by comparing the hash of a caller input (an answer visible in the mempool), Low otherwise.',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      if (c.kind !== 'contract') continue;
      for (const fn of c.functions) {
        if (!fn.body || !fa.isEntryPoint(fn) || fn.kind === 'constructor' || !openToAnyone(fa, fn)) continue;
        const a = fa.analyze(fn);
        for (const call of a.calls) {
          if (!isValueCall(call) || !call.info.target) continue;
          const t = stripAddressCasts(call.info.target);
          if (t.type !== 'identifier' || !a.scope.isStateVar(fa.text(t))) continue;
          const name = fa.text(t);
          if (OWNER_NAME.test(name)) continue;
          for (const w of fa.index.functionsOf(c)) {
            if (w === fn || !fa.isEntryPoint(w) || w.kind !== 'function' || fa.checksCaller(w)) continue;
            const wa = fa.analyze(w);
            const write = wa.stateWrites.find((s) => {
              const p = s.ast.parent;
              const rhs = p?.type === 'assignment_expression' ? field(p, 'right') : undefined;
              return s.name === name && rhs !== undefined && /^(msg\.sender|tx\.origin)$/.test(norm(fa, rhs));
            });
            if (!write) continue;
            const revealed = wa.conditions.some(
              (cond) =>
                cond.node.id !== write.node.id &&
                a.cfg !== wa.cfg &&
                wa.cfg.reachableFrom(cond.node.id).has(write.node.id) &&
                descendants(cond.expr, 'call_expression').some(
                  (h) =>
                    /^(keccak256|sha3|sha256)$/.test(norm(fa, field(h, 'function') ?? h)) &&
                    fa.isUserInput(h, wa),
                ),
            );
            ctx.report(meta, fa.statementOf(call.info.node), {
              fn,
              severity: revealed ? 'medium' : 'low',
              message: revealed
                ? `\`${fn.name}()\` pays \`${name}\`, which \`${w.name}()\` gives to whoever first submits the right answer; the answer is visible in the mempool and can be copied by a faster transaction.`
                : `\`${fn.name}()\` pays \`${name}\`, which anyone can overwrite with their own address through \`${w.name}()\` in a transaction ordered before it.`,
            });
            break;
          }
        }
      }
    }
  },
);
