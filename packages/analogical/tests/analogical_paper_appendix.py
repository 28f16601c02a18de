"""The paper's full prompts and GPT-3.5-turbo outputs, transcribed from Appendix D of
arXiv 2310.01714 (ICLR 2024 camera-ready text) for golden tests. Verbatim, except that the
Codeforces statement's trailing newline is dropped (our template puts one blank line before
"# Instruction:") and the BIG-Bench options line keeps the two spaces of the extracted text."""

MATH_PROBLEM = (
    "An airline serves a dinner to all the passengers on an airplane. They get their choice of "
    "steak or fish. Three steak meals and three fish meals are set aside for the six-member "
    "crew. If the meals are distributed to the crew members randomly, what is the probability "
    "that both pilots get the fish?"
)

MATH_PROMPT = r"""Your task is to tackle mathematical problems. When presented with a math problem, recall relevant problems as examples. Afterward, proceed to solve the initial problem.

# Initial Problem:
An airline serves a dinner to all the passengers on an airplane. They get their choice of steak or fish. Three steak meals and three fish meals are set aside for the six-member crew. If the meals are distributed to the crew members randomly, what is the probability that both pilots get the fish?

# Instructions:
Make sure to include all of the following points:

## Relevant Problems:
Recall three examples of math problems that are relevant to the initial problem. Note that your problems should be distinct from each other and from the initial problem (e.g., involving different numbers and names). For each problem:
- After "Q: ", describe the problem
- After "A: ", explain the solution and enclose the ultimate answer in \boxed{}.

## Solve the Initial Problem:
Say "Let's solve the following math problem." Then formulate your response in the following format:
Q: Copy and paste the initial problem here.
A: Explain the solution and enclose the ultimate answer in \boxed{} here."""

MATH_OUTPUT = r"""Relevant Problems:
Q: In a bag, there are 5 red balls and 3 blue balls. If two balls are drawn at random without replacement, what is the probability that both balls are red?
A: The total number of balls is 8. The probability of drawing a red ball on the first draw is 5/8. After one red ball is drawn, there are 4 red balls left out of 7 total balls. Therefore, the probability of drawing a second red ball is 4/7. The probability of both events happening is the product of the individual probabilities, so the probability of drawing two red balls is (5/8) * (4/7) = \boxed{\frac{5}{14}}.

Q: A box contains 10 red marbles and 5 blue marbles. If three marbles are drawn at random without replacement, what is the probability that all three marbles are red?
A: The total number of marbles is 15. The probability of drawing a red marble on the first draw is 10/15. After one red marble is drawn, there are 9 red marbles left out of 14 total marbles. Therefore, the probability of drawing a second red marble is 9/14. After two red marbles are drawn, there are 8 red marbles left out of 13 total marbles. Therefore, the probability of drawing a third red marble is 8/13. The probability of all three events happening is the product of the individual probabilities, so the probability of drawing three red marbles is (10/15) * (9/14) * (8/13) = \boxed{\frac{24}{91}}.

Q: A bag contains 4 green marbles, 3 red marbles, and 2 blue marbles. If two marbles are drawn at random without replacement, what is the probability that both marbles are green?
A: The total number of marbles is 9. The probability of drawing a green marble on the first draw is 4/9. After one green marble is drawn, there are 3 green marbles left out of 8 total marbles. Therefore, the probability of drawing a second green marble is 3/8. The probability of both events happening is the product of the individual probabilities, so the probability of drawing two green marbles is (4/9) * (3/8) = \boxed{\frac{1}{6}}.

Let's solve the following math problem:
An airline serves a dinner to all the passengers on an airplane. They get their choice of steak or fish. Three steak meals and three fish meals are set aside for the six-member crew. If the meals are distributed to the crew members randomly, what is the probability that both pilots get the fish?
A: There are a total of 6 crew members, so the probability of the first pilot getting the fish is 3/6. After one fish meal is given to the first pilot, there are 2 fish meals left out of 5 total meals. Therefore, the probability of the second pilot getting the fish is 2/5. The probability of both events happening is the product of the individual probabilities, so the probability that both pilots get the fish is (3/6) * (2/5) = \boxed{\frac{1}{5}}."""

GSM8K_PROBLEM = (
    "Kyle bought last year's best-selling book for $19.50. This is with a 25% discount from "
    "the original price. What was the original price of the book?"
)

GSM8K_PROMPT = r"""Your task is to tackle mathematical problems. When presented with a math problem, recall relevant problems as examples. Afterward, proceed to solve the initial problem.

# Initial Problem:
Kyle bought last year's best-selling book for $19.50. This is with a 25% discount from the original price. What was the original price of the book?

# Instructions:
Make sure that your response follows the instructions below.

## Analogous Problems:
Offer five diverse examples of math problems that are relevant or analogous to the initial problem. For each problem, elaborate on the solution and conclude with the ultimate answer (enclosed in \boxed{}). For each problem:
- After "Q: ", describe the problem
- After "A: ", explain the solution and enclose the ultimate answer in \boxed{}.

## Solve the Initial Problem:
Q: Copy and paste the initial problem here.
A: Explain the solution and enclose the ultimate answer in \boxed{} here."""

GSM8K_OUTPUT = r"""Analogous Problems:

Q1: A shirt is on sale for 20% off the original price of $40. What is the sale price of the shirt?
A: The original price of the shirt is $40. With a 20% discount, the discount amount is 20% of $40, which is 0.20 * $40 = $8. Therefore, the sale price of the shirt is $40 - $8 = $32. The answer is $\boxed{32}$.

Q2: A store is offering a 15% discount on all items. If a customer buys a pair of shoes for $85, what was the original price of the shoes?
A: Let's assume the original price of the shoes is $x. With a 15% discount, the discount amount is 15% of $x, which is 0.15 * $x = $0.15x. The sale price of the shoes is $85, so we can set up the equation: $x - $0.15x = $85. Simplifying the equation, we get 0.85x = $85. Dividing both sides by 0.85, we find that x = $100. Therefore, the original price of the shoes was $\boxed{100}$.

Q3: A restaurant offers a 10% discount on all meals. If a customer pays $45 for a meal, what was the original price of the meal?
A: Let's assume the original price of the meal is $x. With a 10% discount, the discount amount is 10% of $x, which is 0.10 * $x = $0.10x. The sale price of the meal is $45, so we can set up the equation: $x - $0.10x = $45. Simplifying the equation, we get 0.90x = $45. Dividing both sides by 0.90, we find that x = $50. Therefore, the original price of the meal was $\boxed{50}$.

Q4: A laptop is on sale for 30% off the original price of $800. What is the sale price of the laptop?
A: The original price of the laptop is $800. With a 30% discount, the discount amount is 30% of $800, which is 0.30 * $800 = $240. Therefore, the sale price of the laptop is $800 - $240 = $560. The answer is $\boxed{560}$.

Q5: A toy store is offering a 12% discount on all toys. If a customer buys a toy for $22, what was the original price of the toy?
A: Let's assume the original price of the toy is $x. With a 12% discount, the discount amount is 12% of $x, which is 0.12 * $x = $0.12x. The sale price of the toy is $22, so we can set up the equation: $x - $0.12x = $22. Simplifying the equation, we get 0.88x = $22. Dividing both sides by 0.88, we find that x = $25. Therefore, the original price of the toy was $\boxed{25}$.

Solve the Initial Problem:

Q: Kyle bought last year's best-selling book for $19.50. This is with a 25% discount from the original price. What was the original price of the book?
A: Let's assume the original price of the book is $x. With a 25% discount, the discount amount is 25% of $x, which is 0.25 * $x = $0.25x. The sale price of the book is $19.50, so we can set up the equation: $x - $0.25x = $19.50. Simplifying the equation, we get 0.75x = $19.50. Dividing both sides by 0.75, we find that x = $26. Therefore, the original price of the book was $\boxed{26}$."""

CODE_PROBLEM = r"""You are given a sequence a_1, a_2, \ldots, a_n. Each element of a is 1 or 2. Find out if an integer k exists so that the following conditions are met.
  1 \leq k \leq n-1, and  a_1 \cdot a_2 \cdot \ldots \cdot a_k = a_{k+1} \cdot a_{k+2} \cdot \ldots \cdot a_n, where \cdot denotes a product.
If there exist multiple k that satisfy the given condition, print the smallest.

Input
Each test contains multiple test cases. The first line contains the number of test cases t (1 \le t \le 100). Description of the test cases follows.
The first line of each test case contains one integer n (2 \leq n \leq 1000).
The second line of each test case contains n integers a_1, a_2, \ldots, a_n (1 \leq a_i \leq 2).

Output
For each test case, if there is no such k, print -1.
Otherwise, print the smallest possible k."""

CODE_PROMPT = (
    "Your goal is to write Python3 code to solve competitive programming problems. Given a "
    "problem, explain the core concepts in it and provide other relevant problems. Then solve "
    "the original problem.\n\n# Problem:\n" + CODE_PROBLEM + "\n\n# Instruction:\n\n"
    "## Algorithms:\nIdentify the core concepts or algorithms used to solve the problem.\n\n"
    "## Tutorial:\nWrite a useful tutorial about these algorithms.\n\n"
    "## Example Problems:\nProvide three examples of relevant competitive programming problems "
    "that involve these algorithms. For each problem, describe the problem, explain the "
    "solution in detail, and then write the correct Python3 code.\n\n"
    "## Python3 code to solve the original problem:\nInclude the following points in your "
    "response:\n- Explanation of the solution:\n- Python3 code to solve the problem:"
)

# the end of GPT-3.5-turbo-16k's output (after two example problems with code, abridged here)
CODE_OUTPUT = """3. Problem: Given an array of integers, find the smallest k such that the product of all the elements in the prefix of the array is equal to the product of all the elements in the suffix of the array.

def smallest_k_with_equal_product(arr):
    n = len(arr)
    prefix = 1
    suffix = 1

    for i in range(n):
        prefix = prefix * arr[i]
        suffix = suffix * arr[n-i-1]

        if prefix == suffix:
            return i+1

    return -1

## Python3 code to solve the original problem:
Explanation of the solution:
- Read the number of test cases.
- Iterate through each test case.
  - Print the value of k.

# Read the number of test cases
t = int(input())

# Process each test case
for _ in range(t):
    # Read the test case input
    n = int(input())
    arr = list(map(int, input().split()))

    # Initialize prefix and suffix variables
    prefix = 1
    suffix = 1
    k = -1

    # Calculate prefix product
    for i in range(n):
        prefix = prefix * arr[i]

    # Calculate suffix product and find smallest k
    for i in range(n-1, 0, -1):
        prefix = prefix // arr[i]
        suffix = suffix * arr[i]

        if prefix == suffix:
            k = i

    # Print the result
    print(k)"""

BBH_PROBLEM = (
    '"Is Siri a stepsister of Mary? Is Susan related to Kate? In large families, it is '
    "sometimes difficult to keep track of all one's relatives. The following argument seeks "
    "to clarify some such relations: To start with, everyone who is a schoolmate of Mildred "
    "is a daughter of Jeanette, too. Now, being a daughter of Jeanette is sufficient for not "
    'being a cousin of Cristi. Therefore, no schoolmate of Mildred is a cousin of Cristi." Is '
    "the argument, given the explicitly stated premises, deductively valid or invalid? "
    "Options: - valid  - invalid"
)

BBH_PROMPT = (
    "Your task is to tackle reasoning problems. When presented with a problem, recall "
    "relevant problems as examples. Afterward, proceed to solve the initial problem.\n\n"
    "# Initial Problem:\n" + BBH_PROBLEM + "\n\n# Instructions:\nMake sure to include all of "
    "the following points:\n\n## Relevant Problems:\nRecall three examples of problems that "
    "are relevant to the initial problem. Note that your problems must be distinct from each "
    'other and from the initial problem. For each problem:\n- After "Q: ", describe the '
    'problem\n- After "A: ", explain the solution and enclose the ultimate answer in '
    "\\boxed{}.\n\n## Solve the Initial Problem:\nSay \"Let's solve the following reasoning "
    'problem." Then formulate your response in the following format:\nQ: Copy and paste the '
    "initial problem here.\nA: Explain the solution and enclose the ultimate answer in "
    "\\boxed{} here."
)

BBH_OUTPUT = r"""Relevant Problems:
Q: In a certain town, all doctors are required to have a medical degree. John is a doctor. Therefore, John must have a medical degree. Is this argument valid or invalid?
A: This argument is valid because it follows the logical form of a categorical syllogism. \boxed{valid}

Q: If it is raining, then the ground is wet. The ground is wet. Therefore, it must be raining. Is this argument valid or invalid?
A: This argument is invalid because it commits the fallacy of affirming the consequent. \boxed{invalid}

Solve the Initial Problem:
Let's solve the following reasoning problem:

Q: "Is Siri a stepsister of Mary? ..." Is the argument, given the explicitly stated premises, deductively valid or invalid?
A: The argument is deductively valid. Therefore, it logically follows that no schoolmate of Mildred is a cousin of Cristi. \boxed{valid}"""
