/** The balance-logic rules on their documented examples: each vulnerable one is reported, each safe one is not. */
import { describeRuleExamples } from '../../rule-examples.testing.ts';
import { BALANCE_LOGIC_EXAMPLES } from './balance-logic.examples.ts';
import * as rules from './balance-logic.ts';

describeRuleExamples(rules, BALANCE_LOGIC_EXAMPLES);
