/** The compiler rules on their documented examples: each vulnerable one is reported, each safe one is not. */
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { COMPILER_EXAMPLES } from './compiler.examples.ts';
import * as rules from './compiler.ts';

describeRuleExamples(rules, COMPILER_EXAMPLES);
