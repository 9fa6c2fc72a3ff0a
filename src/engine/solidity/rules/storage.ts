/** Storage layout hazards (SWC-109, 119, 124): uninitialized pointers, shadowed state, writable array lengths. */
import { descendants, field, unwrap } from '../ast.ts';
import { bodyNodes } from '../model.ts';
import { defineRule } from './rule.ts';

export const arrayLengthWrite = defineRule(
  {
    id: 'sol.storage.array-length-manipulation',
    title: 'Write to a storage array whose length the caller controls',
    description:
      'The length of a dynamic storage array can be set or decremented by callers, and elements are written at a caller-chosen index. With a manipulated (underflowed) length, the index reaches any storage slot, including the owner.',
    remediation:
      'Never assign or decrement `.length` directly; use `push`/`pop` (Solidity >= 0.6) and bound indexes.',
    severity: 'high',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-124',
    cwe: 'CWE-123',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      const manipulated = new Set<string>();
      for (const f of c.functions) {
        if (!fa.isEntryPoint(f) || fa.checksCaller(f)) continue;
        for (const w of fa.analyze(f).stateWrites) {
          const t = unwrap(w.ast);
          if (t.type === 'member_expression' && fa.text(field(t, 'property')!) === 'length')
            manipulated.add(w.name);
        }
      }
      if (manipulated.size === 0) continue;
      for (const f of c.functions) {
        if (!fa.isEntryPoint(f)) continue;
        const a = fa.analyze(f);
        for (const w of a.stateWrites) {
          const t = unwrap(w.ast);
          if (t.type !== 'array_access' || !manipulated.has(w.name)) continue;
          const idx = field(t, 'index');
          if (!idx || !fa.isUserInput(idx, a)) continue;
          ctx.report(meta, fa.statementOf(w.ast), { fn: f });
        }
      }
    }
  },
);

export const uninitializedPointer = defineRule(
  {
    id: 'sol.storage.uninitialized-pointer',
    title: 'Uninitialized storage pointer',
    description:
      'Before Solidity 0.5, a local struct or array declared without a data location and without a value is a storage pointer to slot 0. Writing through it overwrites the first state variables (often the owner).',
    remediation: 'Declare the local `memory`, or initialize it to an existing storage element.',
    severity: 'high',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-109',
    cwe: 'CWE-824',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa, file } = ctx;
    if (!file.versionBelow(0, 5) && file.pragma?.minVersion) return;
    const structs = new Set(file.contracts.flatMap((c) => [...c.structs]));
    for (const fn of fa.ownFunctions()) {
      if (!fn.body) continue;
      for (const stmt of bodyNodes(fn, 'variable_declaration_statement')) {
        if (field(stmt, 'value')) continue;
        for (const d of descendants(stmt, 'variable_declaration')) {
          const v = file.readVar(d, 'local');
          if (!v || v.location === 'memory' || v.location === 'calldata') continue;
          const baseType = v.typeText.replace(/\s*\[.*$/, '');
          if (!(structs.has(baseType) || v.isArray || v.isMapping)) continue;
          ctx.report(meta, stmt, {
            fn,
            message: `\`${v.typeText} ${v.name}\` points to storage slot 0; writes through it overwrite state.`,
          });
        }
      }
    }
  },
);

export const shadowing = defineRule(
  {
    id: 'sol.shadowing.state-variable',
    title: 'State variable shadowing',
    description:
      'A contract declares a state variable with the same name as one of its base contracts. The two are separate storage slots, so functions of the base and of the child read different values.',
    remediation: 'Remove the duplicate declaration and set the inherited variable in the constructor.',
    severity: 'medium',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-119',
    cwe: 'CWE-710',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      const bases = fa.index.lineage(c).slice(1);
      for (const v of c.stateVars.values()) {
        // A private variable of a base is not inherited (the child cannot name it), and a constant
        // takes no storage slot: neither is shadowed. (Since 0.6 the compiler rejects the rest.)
        const shadowed = bases.find((b) => {
          const bv = b.stateVars.get(v.name);
          return bv !== undefined && bv.visibility !== 'private' && !bv.isConstant;
        });
        if (!shadowed) continue;
        ctx.report(meta, v.node, {
          contract: c,
          message: `\`${c.name}.${v.name}\` shadows \`${shadowed.name}.${v.name}\`: functions of \`${shadowed.name}\` keep using their own variable.`,
        });
      }
    }
  },
);
