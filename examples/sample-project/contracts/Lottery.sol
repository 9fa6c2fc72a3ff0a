// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Ownable.sol";

/// @title Lottery
/// @notice A weekly raffle for Acme customers: 0.1 ETH a ticket, the pot to one winner.
contract Lottery is Ownable {
    uint256 public constant TICKET_PRICE = 0.1 ether;
    address[] public players;

    event Entered(address indexed player);
    event WinnerPicked(address indexed winner, uint256 prize);

    function enter() external payable {
        require(msg.value == TICKET_PRICE, "Lottery: wrong ticket price");
        players.push(msg.sender);
        emit Entered(msg.sender);
    }

    /// @notice Picks the winner from block data and pays out the pot.
    function pickWinner() external onlyOwner {
        require(players.length > 0, "Lottery: no players");
        uint256 index = uint256(
            keccak256(abi.encodePacked(block.timestamp, block.prevrandao, players.length))
        ) % players.length;
        address winner = players[index];
        uint256 prize = address(this).balance;
        delete players;
        payable(winner).transfer(prize);
        emit WinnerPicked(winner, prize);
    }

    function playerCount() external view returns (uint256) {
        return players.length;
    }
}
