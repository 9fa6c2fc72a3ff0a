/** Examples and safe idioms of the denial-of-service rules (docs/engine-rules.md; denial-of-service.test.ts runs them). */
import type { RuleExamples } from '../../types.ts';

export const DENIAL_OF_SERVICE_EXAMPLES: RuleExamples = {
  'sol.dos.external-call-in-loop': {
    safeIdioms: [
      'Pull payments: each recipient withdraws their own amount, outside any loop.',
      'A `send` or `call` in a loop whose failure does not revert the transaction (`if (!to.send(v)) owed[to] += v;`).',
      'Loops in `view` and `pure` functions.',
    ],
    vulnerable: `pragma solidity 0.4.24;

contract Refunds {
    address[] people;
    mapping(address => uint256) refunds;

    function refundAll() public {
        for (uint256 i = 0; i < people.length; i++) {
            require(people[i].send(refunds[people[i]]));
        }
    }
}
`,
    safe: `pragma solidity 0.4.24;

contract Refunds {
    mapping(address => uint256) refunds;

    function withdraw() public {
        uint256 amount = refunds[msg.sender];
        refunds[msg.sender] = 0;
        msg.sender.transfer(amount);
    }
}
`,
  },
  'sol.dos.failing-push-payment': {
    safeIdioms: [
      'Pull payments: record what the displaced recipient is owed and let them withdraw it.',
      'A refund whose failure does not revert (`send` or `call` outside `require`/`assert`).',
      'Paying a stored owner-like address (`owner`, `admin`, …), or a stored address the function does not replace.',
      'A caller check on the function.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Auction {
    address leader;
    uint256 topBid;

    function bid() external payable {
        require(msg.value > topBid);
        payable(leader).transfer(topBid);
        leader = msg.sender;
        topBid = msg.value;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Auction {
    address leader;
    uint256 topBid;
    mapping(address => uint256) owed;

    function bid() external payable {
        require(msg.value > topBid);
        owed[leader] += topBid;
        leader = msg.sender;
        topBid = msg.value;
    }

    function withdraw() external {
        uint256 amount = owed[msg.sender];
        owed[msg.sender] = 0;
        payable(msg.sender).transfer(amount);
    }
}
`,
  },
  'sol.dos.unbounded-loop': {
    safeIdioms: [
      'Arrays that only privileged functions can grow (every `push` behind a caller check).',
      'Fixed-size arrays and constant bounds below 100.',
      'A caller-chosen bound when no pass grows storage (the caller only spends their own gas).',
      'Loops whose body neither writes storage nor pays, and loops in `view` and `pure` functions.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Payroll {
    address payable[] members;

    function join() external {
        members.push(payable(msg.sender));
    }

    function payAll() external {
        for (uint256 i = 0; i < members.length; i++) {
            members[i].transfer(1 ether);
        }
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Payroll {
    address owner;
    address payable[] members;
    mapping(address => uint256) owed;

    function add(address payable member) external {
        require(msg.sender == owner);
        members.push(member);
    }

    function payAll() external {
        for (uint256 i = 0; i < members.length; i++) {
            owed[members[i]] += 1 ether;
        }
    }
}
`,
  },
  'sol.dos.storage-array-reset': {
    safeIdioms: [
      'A cap checked before every `push` (`require(players.length < 50)`).',
      'A round counter (or a separate length) instead of clearing the array.',
      'Clearing in the constructor, and clearing arrays nothing pushes to.',
    ],
    vulnerable: `pragma solidity 0.8.20;

contract Lottery {
    address payable[] players;

    function enter() external payable {
        require(msg.value == 1 ether);
        players.push(payable(msg.sender));
    }

    function draw() external {
        players[0].transfer(address(this).balance);
        delete players;
    }
}
`,
    safe: `pragma solidity 0.8.20;

contract Lottery {
    address payable[] players;

    function enter() external payable {
        require(msg.value == 1 ether);
        require(players.length < 50);
        players.push(payable(msg.sender));
    }

    function draw() external {
        address payable winner = players[0];
        delete players;
        winner.transfer(address(this).balance);
    }
}
`,
  },
};
