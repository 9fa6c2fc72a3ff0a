/** Examples and safe idioms of the storage rules (docs/engine-rules.md; storage.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const STORAGE_EXAMPLES: RuleExamples = {
  'sol.storage.array-length-manipulation': {
    impactRationale:
      'With an underflowed length, a caller-chosen index reaches any storage slot, the owner included.',
    safeIdioms: [
      '`push` and `pop` instead of writing `.length` (the only way since Solidity 0.6).',
      'Length writes only in functions with a caller check.',
      'Element writes at indexes the caller does not choose.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Map {
    uint256[] map;

    function set(uint256 key, uint256 value) public {
        if (map.length <= key) {
            map.length = key + 1;
        }
        map[key] = value;
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Map {
    uint256[] map;

    function add(uint256 value) public {
        map.push(value);
    }

    function set(uint256 key, uint256 value) public {
        require(key < map.length);
        map[key] = value;
    }
}
`,
  },
  'sol.storage.uninitialized-pointer': {
    safeIdioms: [
      'A `memory` (or `calldata`) location on the local.',
      'A local initialized where it is declared (`Game storage game = games[i];`).',
      'Solidity 0.5 and later, which reject a local without a data location.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Games {
    struct Game {
        address player;
        uint256 number;
    }

    address owner;

    function play(uint256 n) public {
        Game game;
        game.player = msg.sender;
        game.number = n;
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Games {
    struct Game {
        address player;
        uint256 number;
    }

    Game[] games;

    function play(uint256 n) public {
        Game memory game;
        game.player = msg.sender;
        game.number = n;
        games.push(game);
    }
}
`,
  },
  'sol.shadowing.state-variable': {
    safeIdioms: [
      "A distinct name for the derived contract's variable, or reuse of the base contract's variable.",
      'A private or constant variable of a base contract: a private one is not inherited (the child cannot name it), a constant takes no slot.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Owned {
    address owner;
}

contract Vault is Owned {
    address owner;
}
`,
    safe: `pragma solidity 0.4.24;

contract Owned {
    address owner;
}

contract Vault is Owned {
    address admin;
}
`,
  },
};
