// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Treasury
/// @notice Pays Acme's suppliers from a pooled balance.
contract Treasury {
    address public admin;
    mapping(address => bool) public approvedPayees;

    event Paid(address indexed payee, uint256 amount);

    constructor() {
        admin = msg.sender;
    }

    receive() external payable {}

    function approvePayee(address payee) external {
        require(tx.origin == admin, "Treasury: not admin");
        approvedPayees[payee] = true;
    }

    /// @notice Pays an approved supplier.
    function pay(address payable payee, uint256 amount) external {
        require(tx.origin == admin, "Treasury: not admin");
        require(approvedPayees[payee], "Treasury: payee not approved");
        payee.call{value: amount}("");
        emit Paid(payee, amount);
    }

    function sweep(address payable to) external {
        require(tx.origin == admin, "Treasury: not admin");
        to.send(address(this).balance);
    }
}
