"""The feature the coder 'implemented': the total of a list of numbers."""


def total(numbers):
    return sum(numbers)
