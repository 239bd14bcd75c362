"""Name pools for agent groups: short, distinct, easy to type."""

from __future__ import annotations

MATHEMATICIANS = """
Gauss Hilbert Noether Euler Riemann Ramanujan Lovelace Turing Kovalevskaya Cantor Poincare
Fermat Galois Abel Laplace Lagrange Leibniz Newton Descartes Pascal Bernoulli Cauchy
Weierstrass Dedekind Kronecker Jacobi Dirichlet Fourier Legendre Monge Chebyshev Lobachevsky
Markov Lyapunov Kolmogorov Gelfand Arnold Sobolev Pontryagin Banach Hausdorff Minkowski
Klein Lie Frobenius Cayley Sylvester Hamilton Boole DeMorgan Babbage Godel Church Post Kleene
Tarski Zermelo Fraenkel Brouwer Weyl Courant Artin Hasse Hecke Siegel Gentzen Zorn Hopf Cartan
Borel Lebesgue Baire Picard Hadamard Lefschetz Serre Grothendieck Weil Dieudonne Chevalley
Deligne Connes Thom Smale Milnor Atiyah Bott Singer Nash Tate Langlands Wiles Tao Perelman
Mirzakhani Yau Witten Uhlenbeck Noether2 Germain Agnesi Hypatia Euclid Archimedes Pythagoras
Thales Diophantus Apollonius Eratosthenes Fibonacci Cardano Tartaglia Viete Napier Kepler
Wallis Huygens Stirling Maclaurin Taylor Moivre Bayes Cramer Gosset Fisher Neyman Wiener
Shannon Hamming Knuth Dijkstra Hoare Backus Hopper Neumann Ulam Erdos Conway Hardy Littlewood
Mordell Weyl2 Selberg Atle Chern Hua Kato Iwasawa Shimura Taniyama Kodaira Oka Takagi
""".split()

NBA = """
Jordan Bird Magic Kareem Russell Chamberlain Oscar West Baylor Havlicek Cousy Mikan Pettit
Robertson Erving Malone Moses Hakeem Ewing Barkley Stockton Drexler Pippen Rodman Isiah Dumars
Worthy McHale Parish Wilkins English Dantley Gervin Frazier Reed Monroe Unseld Hayes Cowens
Walton Lanier Thurmond Lucas Greer Sharman Arizin Schayes Pettit2 Shaq Kobe Duncan Garnett
Nowitzki Pierce Allen Iverson Kidd Nash Payton Mourning Mutombo Robinson Olajuwon Wade LeBron
Durant Curry Harden Westbrook Paul Howard Anthony Bosh Parker Ginobili Gasol Yao Rose Love
Aldridge Lillard Irving Butler Leonard George Davis Embiid Jokic Giannis Doncic Tatum Booker
Mitchell Young Morant Zion Ball Fox Adebayo Siakam Gobert Holiday Middleton Lowry DeRozan
Thompson Green Iguodala Rondo Horford Millsap Hibbert Noah Deng Boozer Williams Stoudemire
Marion Bogues Muggsy Hardaway Mullin Richmond Webber Divac Stojakovic Bibby Peja Vince Tracy
Grant Hill Mashburn Sprewell Starks Oakley Mason Houston Rice Glen Jamison Brand Odom Artest
Wallace Billups Hamilton Prince Ilgauskas Ben Rasheed Camby Kemp Mutombo2 Laimbeer Mahorn
""".split()

POOLS: dict[str, list[str]] = {"mathematicians": MATHEMATICIANS, "nba": NBA}


def pool(name: str) -> list[str]:
    """A pool's names, duplicates removed, in order."""
    seen: set[str] = set()
    out = []
    for n in POOLS[name]:
        if n.casefold() not in seen:
            seen.add(n.casefold())
            out.append(n)
    return out
